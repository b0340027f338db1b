package dev.codeexec.sandbox;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.EngineContractTest;
import dev.codeexec.testing.Requirements;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract, run against a real bubblewrap sandbox with the default profile. */
class SandboxEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requireBubblewrap() {
        Requirements.requireCommand("bwrap");
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.create();
    }
}
