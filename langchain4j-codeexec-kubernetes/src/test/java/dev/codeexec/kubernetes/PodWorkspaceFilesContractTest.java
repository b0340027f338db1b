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
        exec(pod, "sh", "-c", "chmod -R u+w \"$1\" \"$2\" 2>/dev/null; rm -rf \"$1\" \"$2\"; mkdir -p \"$1\"",
                "sh", PodLayout.ROOT, OUTSIDE);
        exec(pod, "sh", "-c", CREATE_OUTSIDE, "sh", OUTSIDE);
    }

    @Override
    protected WorkspaceFiles files() {
        return new PodFiles(pod.name(), pod.commands(), PodLayout.DEFAULT_UID, PodLayout.DEFAULT_UID,
                PodFiles.Limits.DEFAULT);
    }

    @Override
    protected void createLink(String path, String target) {
        exec(pod, "sh", "-c", PLANT_LINK, "sh", linkTarget(target, PodLayout.ROOT, OUTSIDE),
                PodLayout.ROOT + "/" + path);
    }

    @Override
    protected boolean outsideIntact() {
        return exec(pod, "sh", "-c", SHOW_OUTSIDE, "sh", OUTSIDE).equals(outsideAsCreated(OUTSIDE));
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
