package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import dev.codeexec.tck.EgressContractTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The egress contract on pods of the fake cluster: each pod in a network namespace of its own with only loopback, the
 * engine's proxy reached only through the tunnel over a real exec (the relay in the pod, the gate's Unix socket on
 * the engine's side). The client program travels as a file ({@link #client}).
 */
class KubernetesEgressContractIT extends EgressContractTest {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine(EgressPolicy policy, EgressProxy.Builder proxy) {
        return KubernetesTesting.engine().egress(policy).egressProxy(proxy).build();
    }

    @Override
    protected WorkspaceEgress egressOf(Engine engine) {
        return ((KubernetesEngine) engine).egress().orElseThrow();
    }

    /**
     * The client as a file of the workspace: in the exec's URL it would pass the fake API server's 4 KB request line
     * (a limit proxies in front of real API servers have too).
     */
    @Override
    protected RunResult client(String... operations) {
        engine.fs().putFiles(ws, List.of(PutFile.of("egress_client.py", CLIENT)));
        List<String> args = new ArrayList<>(List.of("egress_client.py"));
        args.addAll(List.of(operations));
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args(args)
                .timeout(Duration.ofSeconds(240)).build());
        assertThat(r.stderr()).as("client stderr").isEmpty();
        return r;
    }

    @Test
    void should_refuse_an_egress_policy_beside_an_operators_proxy_or_agent_sandbox() {
        PodTemplate withProxy = PodTemplate.builder().image(KubernetesTesting.IMAGE)
                .egressProxy("10.0.0.10:3128")
                .build();
        assertThatThrownBy(() -> KubernetesTesting.engine().pod(withProxy).egress(POLICY).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("PodTemplate.egressProxy");
        assertThatThrownBy(() -> KubernetesTesting.engine().agentSandbox("pool").egress(POLICY).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("agent-sandbox");
    }
}
