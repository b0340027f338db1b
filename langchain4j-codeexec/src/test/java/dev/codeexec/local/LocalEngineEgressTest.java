package dev.codeexec.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import org.junit.jupiter.api.Test;

/** The local engine has no boundary: asked for an egress policy it refuses, before anything starts. */
class LocalEngineEgressTest {

    @Test
    void refuses_an_egress_policy_with_a_message_that_says_where_one_is_enforced() {
        assertThatThrownBy(() -> LocalEngine.builder().egress(EgressPolicy.allowing("pypi.org")).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("LocalEngine cannot enforce an egress policy")
                .hasMessageContaining("sandbox or container engine");
        // Positive control: the same builder without the policy makes an engine that claims no egress control.
        try (LocalEngine engine = LocalEngine.builder().build()) {
            assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.NONE);
        }
    }

    @Test
    void refuses_proxy_settings_without_a_policy() {
        assertThatThrownBy(() -> LocalEngine.builder().egressProxy(EgressProxy.builder()).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("set one with egress(policy)");
    }
}
