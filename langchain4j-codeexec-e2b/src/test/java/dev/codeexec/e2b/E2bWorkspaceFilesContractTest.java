package dev.codeexec.e2b;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import dev.codeexec.tck.WorkspaceFilesContractTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The file primitives over envd (Stat, ListDir, MakeDir, Remove, /files, the staging upload and its helper), against
 * the fake E2B whose envd really reads and writes: its sandboxes' files are this host's, so the fixtures plant links
 * and check the outside with plain file calls. The "outside" is a directory beside the workspace in the sandbox's
 * base directory, the closest a program of the sandbox could get.
 */
class E2bWorkspaceFilesContractTest extends WorkspaceFilesContractTest {

    private static final AtomicInteger N = new AtomicInteger();
    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-files");
    private static E2bEngine engine;
    private Workspace ws;
    private Path root;
    private Path outside;

    @BeforeAll
    static void startEngine() throws Exception {
        engine = FAKE.closing(FAKE.engine().workspaceMode(WorkspaceMode.SHARED_SANDBOX).build());
    }

    @Override
    protected void createWorkspace() throws Exception {
        ws = engine.manager().createWorkspace("files", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
        outside = FAKE.base().resolve("outside-" + N.incrementAndGet());
        Files.createDirectories(outside.resolve("dir"));
        Files.writeString(outside.resolve("file"), SECRET);
        Files.writeString(outside.resolve("dir/secret.txt"), SECRET);
    }

    @Override
    protected void releaseWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

    @Override
    protected WorkspaceFiles files() {
        return engine.files(engine.workspaces().slot(ws));
    }

    @Override
    protected void createLink(String path, String target) throws Exception {
        Path to = switch (target) {
            case OUTSIDE_FILE -> outside.resolve("file");
            case OUTSIDE_DIR -> outside.resolve("dir");
            case MISSING -> root.resolve("no/such/thing");
            default -> root.resolve(target);
        };
        Path at = root.resolve(path);
        Files.createDirectories(at.getParent());
        Files.deleteIfExists(at);
        Files.createSymbolicLink(at, to);
    }

    @Override
    protected boolean outsideIntact() throws Exception {
        try (var l = Files.list(outside); var d = Files.list(outside.resolve("dir"))) {
            return Files.readString(outside.resolve("file"), StandardCharsets.UTF_8).equals(SECRET)
                    && Files.readString(outside.resolve("dir/secret.txt")).equals(SECRET)
                    && l.count() == 2 && d.count() == 1;
        }
    }

    @Override
    protected void removeWorkspace() throws Exception {
        FakeEnvd.removeAll(root);
    }

    @Override
    protected String location() {
        return FAKE.base().toString();
    }

    @Override
    protected boolean supportsSpecialFiles() {
        return true;
    }

    @Override
    protected void createFifo(String path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", root.resolve(path).toString()).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("mkfifo failed");
        }
    }
}
