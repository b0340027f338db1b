package dev.codeexec.langchain4j;

import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on the local engine. */
class CodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @BeforeAll
    static void requirePython() {
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return LocalEngine.builder().artifactService(new InMemoryArtifactService()).build();
    }
}
