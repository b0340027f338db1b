package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The shared engine contract on E2bEngine with every workspace a directory of one shared sandbox. */
class E2bSharedEngineContractTest extends EngineContractTest {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-shared-contract");

    @Override
    protected Engine createEngine() {
        return FAKE.engine().workspaceMode(WorkspaceMode.SHARED_SANDBOX).build();
    }
}
