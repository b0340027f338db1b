package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The engine contract against a remote Docker engine over TCP with TLS: a second dockerd of the test's own on a
 * loopback port, requiring client certificates. Also: a client without certificates, or with one the daemon's CA did
 * not sign, is refused and reported as an unavailable backend.
 */
class ContainerRemoteTlsIT extends EngineContractTest {

    private static SecondDockerd remote;

    @BeforeAll
    static void startRemote() throws Exception {
        ContainerTesting.requireDocker();
        remote = SecondDockerd.start(ContainerTesting.IMAGE);
    }

    @AfterAll
    static void stopRemote() throws Exception {
        if (remote != null) {
            remote.close();
        }
    }

    @Override
    protected Engine createEngine() {
        return ContainerTesting.engine().dockerHost(remote.tcpHost()).tls(remote.certs.toString()).build();
    }

    @Test
    void should_run_on_the_remote_engine_not_the_local_one() {
        ContainerEngine e = (ContainerEngine) engine;
        Workspace w = engine.manager().createWorkspace("remote", WorkspacePolicy.DEFAULT);

        assertThat(engine.runner().runProgram(w, RunProgramSpec.builder("echo").args("over tls").build()).stdout())
                .isEqualTo("over tls\n");
        assertThat(ContainerTesting.containersOf(e.instanceId())).as("containers on the local engine").isEmpty();
    }

    @Test
    void should_refuse_a_client_without_certificates_or_with_a_foreign_one() {
        assertThatThrownBy(() -> ContainerTesting.engine().dockerHost(remote.tcpHost()).build())
                .isInstanceOf(BackendUnavailableException.class);
        assertThatThrownBy(() -> ContainerTesting.engine().dockerHost(remote.tcpHost())
                .tls(remote.dir.resolve("rogue").toString()).build())
                .isInstanceOf(BackendUnavailableException.class);
    }
}
