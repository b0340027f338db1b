package dev.codeexec.kubernetes;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract, on pods of the fake cluster, over the real exec protocol (v5). */
class KubernetesEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return KubernetesTesting.engine().build();
    }
}
