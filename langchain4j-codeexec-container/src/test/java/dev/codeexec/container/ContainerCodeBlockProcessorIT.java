package dev.codeexec.container;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on real workspace containers. */
class ContainerCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().artifactService(new InMemoryArtifactService()).build();
    }
}
