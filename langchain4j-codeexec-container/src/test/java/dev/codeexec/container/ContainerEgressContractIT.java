package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.tck.EgressContractTest;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The egress contract with a real Docker engine: containers without a network, the proxy's socket bound into each,
 * its forwarder run by the image's python3 as a user the programs are not.
 */
class ContainerEgressContractIT extends EgressContractTest {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Override
    protected Engine createEngine(EgressPolicy policy, EgressProxy.Builder proxy) {
        return ContainerTesting.engine().egress(policy).egressProxy(proxy).build();
    }

    @Override
    protected WorkspaceEgress egressOf(Engine engine) {
        return ((ContainerEngine) engine).egress().orElseThrow();
    }

    @Test
    void should_refuse_an_egress_policy_beside_the_network_or_a_pool() {
        assertThatThrownBy(() -> ContainerTesting.engine().network(true).egress(POLICY).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("replaces network(true)");
        assertThatThrownBy(() -> ContainerTesting.engine().warmPool(1, java.time.Duration.ofMinutes(1)).egress(POLICY).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("no warm pool");
    }
}
