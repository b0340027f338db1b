package dev.codeexec.container;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract, run against a real Docker engine with the default, hardened settings. */
class ContainerEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().build();
    }
}
