package dev.codeexec.e2b;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.AbstractCodeBlockProcessorIT;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on E2bEngine: the promoted block runs as a cell of the code interpreter. */
class E2bCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    private static Path base;
    private static FakeE2b fake;

    @BeforeAll
    static void startFake() throws Exception {
        FakeTesting.requirePython();
        base = Files.createTempDirectory("e2b-blocks");
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
        return fake.engine().artifactService(new InMemoryArtifactService()).build();
    }
}
