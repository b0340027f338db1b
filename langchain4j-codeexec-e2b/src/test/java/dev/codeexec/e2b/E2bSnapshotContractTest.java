package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.SnapshotContractTest;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The snapshot contract on the fake E2B (E2B's wire format, files on this host): round trips, links, receipts. */
class E2bSnapshotContractTest extends SnapshotContractTest {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-snapshots");

    @Override
    protected Engine createEngine() {
        return FAKE.closing(FAKE.engine().build());
    }
}
