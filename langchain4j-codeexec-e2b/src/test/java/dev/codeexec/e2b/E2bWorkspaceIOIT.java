package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.AbstractWorkspaceIOIT;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The application facade and the CodeExecutionEngine adapter on E2bEngine. */
class E2bWorkspaceIOIT extends AbstractWorkspaceIOIT {

    private static Path base;
    private static FakeE2b fake;

    @BeforeAll
    static void startFake() throws Exception {
        FakeTesting.requirePython();
        base = Files.createTempDirectory("e2b-io");
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
        return fake.engine().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
