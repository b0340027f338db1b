package dev.codeexec.local;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import dev.codeexec.testing.Requirements;
import org.junit.jupiter.api.BeforeAll;

class LocalEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requirePython() {
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return LocalEngine.create();
    }
}
