package dev.codeexec.kubernetes;

import dev.codeexec.engine.PolicyViolationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tree-kill rule of a new workspace ({@link KubernetesWorkspaces#requireTreeKill}): a pod whose image offers no
 * subreaper is refused unless the builder accepts it. (The fake cluster's pods run this host's {@code /usr}, which has
 * both launchers, so the probe's {@code none} cannot be produced end to end here.)
 */
class KubernetesWorkspacesTreeKillTest {

    @Test
    void should_refuse_a_pod_without_a_subreaper_when_the_builder_does_not_accept_it() {
        assertThat(PodScripts.reaperOf("none\n")).isEqualTo(PodScripts.Reaper.NONE);
        assertThatThrownBy(() -> KubernetesWorkspaces.requireTreeKill(PodScripts.reaperOf("none\n"), "codeexec-abc",
                false))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("codeexec-abc has neither python3 nor perl")
                .hasMessageContaining("acceptWithoutTreeKill(true)");
    }

    @Test
    void should_accept_a_pod_with_a_subreaper_or_one_the_builder_accepts_without() {
        assertThatCode(() -> KubernetesWorkspaces.requireTreeKill(PodScripts.Reaper.PERL, "p", false))
                .doesNotThrowAnyException();
        assertThatCode(() -> KubernetesWorkspaces.requireTreeKill(PodScripts.Reaper.PYTHON, "p", false))
                .doesNotThrowAnyException();
        assertThatCode(() -> KubernetesWorkspaces.requireTreeKill(PodScripts.Reaper.NONE, "p", true))
                .doesNotThrowAnyException();
    }
}
