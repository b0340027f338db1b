package dev.codeexec.e2b;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The response processor end to end on E2bEngine: the promoted block runs as a cell of the code interpreter. */
class E2bCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-blocks");

    @Override
    protected Engine createEngine() {
        return FAKE.engine().artifactService(new InMemoryArtifactService()).build();
    }
}
