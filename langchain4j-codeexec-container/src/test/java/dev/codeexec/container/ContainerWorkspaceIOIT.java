package dev.codeexec.container;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceIOIT;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The application facade and the CodeExecutionEngine adapter on real workspace containers. */
class ContainerWorkspaceIOIT extends AbstractWorkspaceIOIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
