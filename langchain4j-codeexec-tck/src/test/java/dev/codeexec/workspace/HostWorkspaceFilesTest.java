package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import dev.codeexec.tck.WorkspaceFilesContractTest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host-directory primitives against the shared contract, plus what only a host provider can get wrong. */
class HostWorkspaceFilesTest extends WorkspaceFilesContractTest {

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    Workspace ws;
    Path root;
    Path outsideFile;
    Path outsideDir;

    @Override
    protected void createWorkspace() throws IOException {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        ws = manager.createWorkspace("files", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
        outsideFile = Files.writeString(tmp.resolve("outside-file.txt"), SECRET);
        outsideDir = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outsideDir.resolve("secret.txt"), SECRET);
    }

    @Override
    protected WorkspaceFiles files() {
        return new HostWorkspaceFiles(new PathResolver(root));
    }

    @Override
    protected void createLink(String path, String target) throws IOException {
        Path link = root.resolve(path);
        Files.createDirectories(link.getParent());
        Path to = switch (target) {
            case OUTSIDE_FILE -> outsideFile;
            case OUTSIDE_DIR -> outsideDir;
            case MISSING -> tmp.resolve("no-such-target");
            // A relative link, as a program in the workspace would make it.
            default -> link.getParent().relativize(root.resolve(target));
        };
        Files.createSymbolicLink(link, to);
    }

    @Override
    protected boolean outsideIntact() throws IOException {
        try (Stream<Path> s = Files.list(outsideDir)) {
            return Files.readString(outsideFile).equals(SECRET)
                    && s.map(p -> p.getFileName().toString()).toList().equals(List.of("secret.txt"))
                    && Files.readString(outsideDir.resolve("secret.txt")).equals(SECRET);
        }
    }

    @Override
    protected void removeWorkspace() {
        manager.cleanup(ws);
    }

    @Override
    protected String location() {
        return root.toString();
    }

    @Override
    protected void releaseWorkspace() {
        manager.close();
    }

    @Override
    protected boolean supportsSpecialFiles() {
        return true;
    }

    @Override
    protected void createFifo(String path) throws Exception {
        Process mk = new ProcessBuilder("mkfifo", root.resolve(path).toString()).start();
        assertThat(mk.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(mk.exitValue()).isZero();
    }

    @Test
    void should_refuse_importing_a_host_tree_into_a_workspace_inside_it() throws IOException {
        ImportSource everything = ImportSource.ofHostPath(tmp.toRealPath());

        assertThatThrownBy(() -> files().importTree(everything, "work/in", false))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("inside the source")
                .hasMessageNotContaining(tmp.toString());

        assertThat(root.resolve("work/in")).doesNotExist();
    }

    @Test
    void should_copy_nothing_when_the_host_source_root_is_itself_a_link() throws IOException {
        Path real = Files.createDirectories(tmp.resolve("real"));
        Files.writeString(real.resolve("a.txt"), "a");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        List<String> seen = new ArrayList<>();

        ImportSource.ofHostPath(link).forEach(new ImportSource.Visitor() {
            @Override
            public void directory(FileEntry directory) {
                seen.add(directory.path());
            }

            @Override
            public void file(FileEntry file, InputStream content) {
                seen.add(file.path());
            }
        });

        assertThat(seen).isEmpty();
    }
}
