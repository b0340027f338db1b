package dev.codeexec.container;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The workspace tools end to end on real workspace containers. */
class ContainerWorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().inputRoots(List.of(inputRoot)).artifactService(artifacts).build();
    }

    /** The container's files are compared by listing (sizes and times through the archive API): no kernel notices. */
    @Override
    protected boolean seesRewritesThatKeepSizeAndTime() {
        return false;
    }

    /**
     * Another workspace is another container: no path in this one leads to it. What a link planted to reach it can
     * name is a path outside this workspace, which is what the shared scenarios need.
     */
    @Override
    protected Path hostRootOf(String rel) {
        return Path.of(ContainerWorkspaces.VOLUME, "another-workspace");
    }
}
