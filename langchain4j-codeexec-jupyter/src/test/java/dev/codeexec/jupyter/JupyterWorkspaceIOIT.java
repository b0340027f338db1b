package dev.codeexec.jupyter;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceIOIT;
import dev.codeexec.testing.Requirements;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The application facade and the CodeExecutionEngine adapter on the Jupyter engine. */
class JupyterWorkspaceIOIT extends AbstractWorkspaceIOIT {

    @BeforeAll
    static void requireKernel() {
        Requirements.requireCommand("python3");
        JupyterTesting.requireKernel();
    }

    @Override
    protected Engine createEngine() {
        return JupyterEngine.builder().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
