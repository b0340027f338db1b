package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shared engine contract on E2bEngine, one sandbox per workspace, against the fake E2B: its programs are this
 * host's processes, so the contract's own look at {@code /proc} proves that a timeout leaves none of a run's
 * processes behind; python blocks run in the fake code interpreter.
 */
class E2bEngineContractTest extends EngineContractTest {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-contract");

    @Override
    protected Engine createEngine() {
        return FAKE.engine().build();
    }
}
