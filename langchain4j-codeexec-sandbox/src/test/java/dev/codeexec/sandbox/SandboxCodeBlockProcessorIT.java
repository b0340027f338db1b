package dev.codeexec.sandbox;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on a real bubblewrap sandbox with the default profile. */
class SandboxCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @BeforeAll
    static void requireBubblewrap() {
        SandboxTesting.requireSandbox();
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.builder().artifactService(new InMemoryArtifactService()).build();
    }
}
