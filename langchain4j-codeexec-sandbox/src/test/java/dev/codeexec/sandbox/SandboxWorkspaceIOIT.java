package dev.codeexec.sandbox;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceIOIT;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The application facade and the CodeExecutionEngine adapter on a real bubblewrap sandbox with the default profile. */
class SandboxWorkspaceIOIT extends AbstractWorkspaceIOIT {

    @BeforeAll
    static void requireBubblewrap() {
        SandboxTesting.requireSandbox();
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.builder().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
