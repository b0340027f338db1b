package dev.codeexec.container;

import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.AbstractWorkspaceToolsIT;
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
}
