package dev.codeexec.e2b;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceIOIT;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The application facade and the CodeExecutionEngine adapter on E2bEngine. */
class E2bWorkspaceIOIT extends AbstractWorkspaceIOIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-io");

    @Override
    protected Engine createEngine() {
        return FAKE.engine().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
