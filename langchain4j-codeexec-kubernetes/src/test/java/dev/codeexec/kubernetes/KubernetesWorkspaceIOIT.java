package dev.codeexec.kubernetes;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceIOIT;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The application facade and the CodeExecutionEngine adapter on pods of the fake cluster. */
class KubernetesWorkspaceIOIT extends AbstractWorkspaceIOIT {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return KubernetesTesting.engine().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }
}
