package dev.codeexec.kubernetes;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.SnapshotContractTest;
import org.junit.jupiter.api.BeforeAll;

/**
 * The snapshot contract on pods of the fake cluster, over the real exec protocol (v5): round trips on the engine and
 * through the local engine, links a program made skipped, tampering refused with the target kept, receipts.
 */
class KubernetesSnapshotContractTest extends SnapshotContractTest {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return KubernetesTesting.engine().build();
    }
}
