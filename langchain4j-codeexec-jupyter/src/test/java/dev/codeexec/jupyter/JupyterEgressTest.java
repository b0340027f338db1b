package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressPolicy;
import org.junit.jupiter.api.Test;

/** A kernel on this host has no boundary: asked for an egress policy, the engine refuses before it starts one. */
class JupyterEgressTest {

    @Test
    void refuses_an_egress_policy() {
        assertThatThrownBy(() -> JupyterEngine.builder().egress(EgressPolicy.allowing("pypi.org")).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("cannot enforce an egress policy");
    }
}
