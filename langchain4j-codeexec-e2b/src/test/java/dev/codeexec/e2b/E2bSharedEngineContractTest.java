package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.EngineContractTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract on E2bEngine with every workspace a directory of one shared sandbox. */
class E2bSharedEngineContractTest extends EngineContractTest {

    private static Path base;
    private static FakeE2b fake;

    @BeforeAll
    static void startFake() throws Exception {
        FakeTesting.requirePython();
        base = Files.createTempDirectory("e2b-shared-contract");
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
        return fake.engine().workspaceMode(WorkspaceMode.SHARED_SANDBOX).build();
    }
}
