package dev.codeexec.kubernetes;

import dev.codeexec.tck.WorkspaceFilesContractTest;
import dev.codeexec.testing.Requirements;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The file primitives as tar over exec, against a pod on this host ({@link FakePod}): its namespaces, read-only root,
 * {@code emptyDir} volume and user, with the host's GNU tools as the image. Links are planted and the outside checked
 * with execs (argv, no shell line); the "outside" is a directory of the same volume beside the workspace, the closest
 * a program of the pod could get.
 */
class PodWorkspaceFilesContractTest extends WorkspaceFilesContractTest {

    private static final String OUTSIDE = PodLayout.VOLUME + "/outside";

    private static FakePod pod;

    @BeforeAll
    static void startPod() {
        Requirements.require(FakePod.available(), "root with bwrap, nsenter and setpriv (the fake pod)");
        pod = FakePod.start("files");
    }

    @AfterAll
    static void stopPod() {
        if (pod != null) {
            pod.close();
        }
    }

    /** Runs a command in the pod; its standard output. */
    static String exec(FakePod pod, String... argv) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = pod.commands().run(pod.name(), List.of(argv), null, out, PodFiles.Limits.DEFAULT.command());
        if (r.exitCode() != 0) {
            throw new IllegalStateException(argv[0] + " failed in the pod (" + r.exitCode() + "): " + r.stderr());
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    protected void createWorkspace() {
        exec(pod, "sh", "-c", "chmod -R u+w \"$1\" \"$2\" 2>/dev/null; rm -rf \"$1\" \"$2\"; mkdir -p \"$1\" \"$2/dir\""
                + " && printf secret >\"$2/file\" && printf secret >\"$2/dir/secret.txt\"", "sh", PodLayout.ROOT,
                OUTSIDE);
    }

    @Override
    protected WorkspaceFiles files() {
        return new PodFiles(pod.name(), pod.commands(), PodLayout.DEFAULT_UID, PodLayout.DEFAULT_UID,
                PodFiles.Limits.DEFAULT);
    }

    @Override
    protected void createLink(String path, String target) {
        String to = switch (target) {
            case OUTSIDE_FILE -> OUTSIDE + "/file";
            case OUTSIDE_DIR -> OUTSIDE + "/dir";
            case MISSING -> PodLayout.ROOT + "/no/such/thing";
            default -> PodLayout.ROOT + "/" + target;
        };
        exec(pod, "sh", "-c", "mkdir -p \"$(dirname \"$2\")\" && ln -sfn \"$1\" \"$2\"", "sh", to,
                PodLayout.ROOT + "/" + path);
    }

    @Override
    protected boolean outsideIntact() {
        String out = exec(pod, "sh", "-c", "cat \"$1/file\"; echo; cat \"$1/dir/secret.txt\"; echo; ls -A \"$1\" \"$1/dir\"",
                "sh", OUTSIDE);
        return out.equals("secret\nsecret\n" + OUTSIDE + ":\ndir\nfile\n\n" + OUTSIDE + "/dir:\nsecret.txt\n");
    }

    @Override
    protected void removeWorkspace() {
        exec(pod, "sh", "-c", "chmod -R u+w \"$1\"; rm -rf \"$1\"", "sh", PodLayout.ROOT);
    }

    @Override
    protected String location() {
        return PodLayout.VOLUME;
    }

    @Override
    protected boolean supportsSpecialFiles() {
        return true;
    }

    @Override
    protected void createFifo(String path) {
        exec(pod, "mkfifo", PodLayout.ROOT + "/" + path);
    }
}
