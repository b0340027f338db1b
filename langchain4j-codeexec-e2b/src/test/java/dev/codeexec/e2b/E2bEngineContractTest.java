package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.EngineContractTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared engine contract on E2bEngine, one sandbox per workspace, against the fake E2B: its programs are this
 * host's processes, so the contract's own look at {@code /proc} proves that a timeout leaves none of a run's
 * processes behind; python blocks run in the fake code interpreter.
 */
class E2bEngineContractTest extends EngineContractTest {

    static Path base;
    static FakeE2b fake;

    @BeforeAll
    static void startFake() throws Exception {
        FakeTesting.requirePython();
        base = Files.createTempDirectory("e2b-contract");
        fake = new FakeE2b(base);
    }

    @AfterAll
    static void stopFake() throws Exception {
        if (fake != null) {
            fake.close();
        }
        if (base != null) {
            FakeEnvd.removeAll(base);
        }
    }

    @Override
    protected Engine createEngine() {
        return fake.engine().build();
    }
}
