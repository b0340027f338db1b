package dev.codeexec.jupyter;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import dev.codeexec.testing.Requirements;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared engine contract on the Jupyter engine: programs and files as on the local engine, and code blocks with
 * python in the kernel.
 */
class JupyterEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requireKernel() {
        Requirements.requireCommand("python3");
        JupyterTesting.requireKernel();
    }

    @Override
    protected Engine createEngine() {
        return JupyterEngine.create();
    }
}
