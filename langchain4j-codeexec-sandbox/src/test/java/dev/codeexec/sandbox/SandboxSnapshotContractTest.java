package dev.codeexec.sandbox;

import dev.codeexec.engine.Engine;
import dev.codeexec.testing.Requirements;
import dev.codeexec.tck.SnapshotContractTest;
import org.junit.jupiter.api.BeforeAll;

/** The snapshot contract on a real bubblewrap sandbox: round trips, links skipped, tampering refused, receipts. */
class SandboxSnapshotContractTest extends SnapshotContractTest {

    @BeforeAll
    static void requireBubblewrap() {
        Requirements.requireCommand("bwrap");
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.create();
    }
}
