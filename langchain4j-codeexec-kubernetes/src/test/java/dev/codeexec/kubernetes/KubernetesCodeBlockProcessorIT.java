package dev.codeexec.kubernetes;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractCodeBlockProcessorIT;
import org.junit.jupiter.api.BeforeAll;

/** The response processor end to end on pods of the fake cluster. */
class KubernetesCodeBlockProcessorIT extends AbstractCodeBlockProcessorIT {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return KubernetesTesting.engine().artifactService(new InMemoryArtifactService()).build();
    }
}
