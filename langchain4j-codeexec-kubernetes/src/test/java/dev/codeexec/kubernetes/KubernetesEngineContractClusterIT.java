package dev.codeexec.kubernetes;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract on a real cluster (profile {@code kubernetes-cluster}; see {@link ClusterTesting}). */
class KubernetesEngineContractClusterIT extends EngineContractTest {

    @BeforeAll
    static void requireCluster() {
        ClusterTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return ClusterTesting.engine().build();
    }
}
