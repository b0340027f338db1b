package dev.codeexec.container;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import dev.codeexec.tck.WorkspaceFilesContractTest;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The file primitives over the archive API, against a real workspace container. Links are planted and the outside
 * checked with helper execs (argv, no shell line): the "outside" is a directory of the same container beside the
 * workspace, the closest a program could get.
 */
class ContainerWorkspaceFilesContractTest extends WorkspaceFilesContractTest {

    private static final String OUTSIDE = ContainerWorkspaces.VOLUME + "/outside";

    private static ContainerEngine engine;
    private Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireDocker();
        engine = ContainerTesting.engine().build();
    }

    @AfterAll
    static void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    /** As root (without capabilities), for what lies outside the workspace. */
    private Execs.Result exec(String... argv) {
        return Execs.run(engine.docker(), engine.containerId(ws), "0:0", List.of(argv));
    }

    /** As the workspace's user, who owns it (root without capabilities may not write there). */
    private Execs.Result execInWorkspace(String... argv) {
        String user = ContainerEngine.DEFAULT_UID + ":" + ContainerEngine.DEFAULT_UID;
        return Execs.run(engine.docker(), engine.containerId(ws), user, List.of(argv));
    }

    @Override
    protected void createWorkspace() {
        ws = engine.manager().createWorkspace("files", WorkspacePolicy.DEFAULT);
        exec("sh", "-c", CREATE_OUTSIDE, "sh", OUTSIDE);
    }

    @Override
    protected void releaseWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

    @Override
    protected WorkspaceFiles files() {
        return engine.files(ws);
    }

    @Override
    protected void createLink(String path, String target) {
        Execs.Result r = execInWorkspace("sh", "-c", PLANT_LINK, "sh",
                linkTarget(target, ContainerWorkspaces.ROOT, OUTSIDE), ContainerWorkspaces.ROOT + "/" + path);
        if (!r.ok()) {
            throw new IllegalStateException("could not create a link: " + r.stderr());
        }
    }

    @Override
    protected boolean outsideIntact() {
        Execs.Result r = exec("sh", "-c", SHOW_OUTSIDE, "sh", OUTSIDE);
        return r.ok() && r.stdout().equals(outsideAsCreated(OUTSIDE));
    }

    @Override
    protected void removeWorkspace() {
        engine.docker().control().removeContainerCmd(engine.containerId(ws)).withForce(true).withRemoveVolumes(true)
                .exec();
    }

    @Override
    protected String location() {
        return ContainerWorkspaces.VOLUME;
    }

    @Override
    protected boolean supportsSpecialFiles() {
        return true;
    }

    @Override
    protected void createFifo(String path) {
        execInWorkspace("mkfifo", ContainerWorkspaces.ROOT + "/" + path);
    }
}
