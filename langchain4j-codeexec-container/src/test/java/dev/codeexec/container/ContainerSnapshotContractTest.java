package dev.codeexec.container;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.SnapshotContractTest;
import org.junit.jupiter.api.BeforeAll;

/** The snapshot contract on a real Docker container: round trips, links skipped, tampering refused, receipts. */
class ContainerSnapshotContractTest extends SnapshotContractTest {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().build();
    }
}
