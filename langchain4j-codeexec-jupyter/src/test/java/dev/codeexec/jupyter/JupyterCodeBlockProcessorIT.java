package dev.codeexec.jupyter;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on the Jupyter engine: the promoted block runs as a cell in the kernel. */
class JupyterCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @BeforeAll
    static void requireKernel() {
        JupyterTesting.requireKernel();
    }

    @Override
    protected Engine createEngine() {
        return JupyterEngine.builder().artifactService(new InMemoryArtifactService()).build();
    }
}
