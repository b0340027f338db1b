package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.network.EgressApproval;
import dev.codeexec.network.EgressApprover;
import dev.codeexec.network.EgressCapable;
import dev.codeexec.network.EgressEvent;
import dev.codeexec.network.EgressListener;
import dev.codeexec.network.EgressRequest;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.testing.Requirements;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code codeexec.network.*}: the egress policy reaches the engines that can enforce it, every mistake stops the
 * start-up naming its property, and a backend that cannot enforce a policy refuses to start with one.
 */
class NetworkPropertiesTest {

    @TempDir
    Path dir;

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                        "codeexec.local.base-dir=" + dir.resolve("workspaces"), "codeexec.audit-log=false")
                .withPropertyValues(properties);
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private void assertFailsNaming(String property, String message, String... properties) {
        runner(properties).run(ctx -> {
            assertThat(ctx).as(String.join(" ", properties)).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).as(String.join(" ", properties))
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining(property).hasMessageContaining(message);
        });
    }

    @Test
    void should_fail_at_start_up_with_an_invalid_rule_naming_the_property_and_the_rule() {
        assertFailsNaming("codeexec.network.allow[1]", "pypi.org:99999", "codeexec.backend=sandbox",
                "codeexec.network.allow=files.pythonhosted.org,pypi.org:99999");
        assertFailsNaming("codeexec.network.deny[0]", "must not be blank", "codeexec.backend=sandbox",
                "codeexec.network.allow=pypi.org", "codeexec.network.deny[0]= ");
    }

    /** The rules and limits of the application.yml example in docs/spring-boot.md. */
    @Test
    void should_build_the_documented_policy_and_limits() {
        NetworkProperties n = new NetworkProperties();
        n.setAllow(List.of("pypi.org", "*.pythonhosted.org", "https://api.github.com", "127.0.0.1:8081"));
        n.setDeny(List.of("10.0.0.0/8"));
        n.setMaxConnections(16);
        n.setMaxBytes(536870912L);
        n.setIdleTimeout(java.time.Duration.ofMinutes(2));
        n.setApprovalTimeout(java.time.Duration.ofSeconds(30));
        NetworkSettings s = NetworkSettings.of(n, null, List.of());
        assertThat(s.policy().rules()).hasSize(5);
        assertThat(s.policy().allowsOthers()).isFalse();
        assertThat(s.proxy()).isNotNull();
    }

    @Test
    void should_fail_at_start_up_with_an_invalid_limit_naming_the_property() {
        String[][] cases = {
            {"codeexec.network.max-connections=0", "codeexec.network.max-connections", "must be at least 1"},
            {"codeexec.network.max-bytes=-1", "codeexec.network.max-bytes", "must not be negative"},
            {"codeexec.network.idle-timeout=0s", "codeexec.network.idle-timeout", "must be positive"},
            {"codeexec.network.connect-timeout=-1s", "codeexec.network.connect-timeout", "must be positive"},
            {"codeexec.network.approval-timeout=0s", "codeexec.network.approval-timeout", "must be positive"},
        };
        for (String[] c : cases) {
            assertFailsNaming(c[1], c[2], "codeexec.backend=sandbox", "codeexec.network.allow=pypi.org", c[0]);
        }
    }

    @Test
    void should_refuse_proxy_settings_without_a_policy_rather_than_run_unlimited() {
        assertFailsNaming("codeexec.network.max-bytes", "runs only with an egress policy", "codeexec.backend=local",
                "codeexec.network.max-bytes=1048576");
    }

    @Test
    void should_fail_closed_when_the_backend_cannot_enforce_a_policy() {
        for (String backend : List.of("local", "jupyter")) {
            for (String policy : List.of("codeexec.network.allow=pypi.org", "codeexec.network.deny=10.0.0.0/8",
                    "codeexec.network.allow-others=true")) {
                runner("codeexec.backend=" + backend, policy).run(ctx -> {
                    assertThat(ctx).as(backend + " " + policy).hasFailed();
                    assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("codeexec.backend=" + backend + " cannot enforce the egress policy "
                                    + "of codeexec.network.*")
                            .hasMessageContaining("Use the sandbox or container backend");
                });
            }
        }
    }

    @Test
    void should_refuse_a_policy_together_with_the_backends_own_open_network() {
        assertFailsNaming("codeexec.sandbox.network", "needs the restricted network", "codeexec.backend=sandbox",
                "codeexec.sandbox.network=enabled", "codeexec.network.allow=pypi.org");
        // Refused before any Docker endpoint is contacted.
        assertFailsNaming("codeexec.container.network", "replaces the container network", "codeexec.backend=container",
                "codeexec.container.image=codeexec-python:bookworm", "codeexec.container.docker-host=tcp://127.0.0.1:9",
                "codeexec.container.network=true", "codeexec.network.allow=pypi.org");
        assertFailsNaming("codeexec.e2b.internet-access", "Set one of them", "codeexec.backend=e2b",
                "codeexec.e2b.api-key=e2b_test", "codeexec.e2b.internet-access=true",
                "codeexec.network.allow=pypi.org");
        assertFailsNaming("codeexec.network.*", "E2B's firewall", "codeexec.backend=e2b",
                "codeexec.e2b.api-key=e2b_test", "codeexec.network.allow=pypi.org",
                "codeexec.network.max-connections=4");
    }

    @Test
    void should_hand_the_policy_to_e2b_without_contacting_it() {
        runner("codeexec.backend=e2b", "codeexec.e2b.api-key=e2b_test", "codeexec.e2b.api-url=http://127.0.0.1:9",
                "codeexec.network.allow=pypi.org,*.pythonhosted.org").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Engine engine = ctx.getBean(Engine.class);
                    assertThat(engine).isInstanceOf(E2bEngine.class);
                    assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROVIDER);
                });
        runner("codeexec.backend=e2b", "codeexec.e2b.api-key=e2b_test", "codeexec.e2b.api-url=http://127.0.0.1:9")
                .run(ctx -> assertThat(ctx.getBean(Engine.class).describe().egressControl())
                        .isEqualTo(EgressControl.NONE));
    }

    @Test
    void should_leave_the_engine_without_egress_control_when_no_rule_is_set() {
        runner("codeexec.backend=local").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(Engine.class).describe().egressControl()).isEqualTo(EgressControl.NONE);
        });
    }

    /**
     * The sandbox held to the policy through its proxy, which asks the context's approver about a host no rule
     * covers and reports to the context's listeners; curl in the sandbox gets the proxy's refusal.
     */
    @Test
    void should_hold_the_sandbox_to_the_policy_with_the_contexts_approver_and_listeners() {
        Requirements.requireCommand("bwrap");
        Requirements.requireCommand("curl");
        List<EgressRequest> asked = new CopyOnWriteArrayList<>();
        List<EgressEvent> heard = new CopyOnWriteArrayList<>();
        EgressApprover approver = EgressApprover.of(r -> {
            asked.add(r);
            return EgressApproval.DENY;
        });
        runner("codeexec.backend=sandbox", "codeexec.network.allow=pypi.test", "codeexec.network.deny=10.0.0.0/8",
                "codeexec.network.max-connections=4", "codeexec.network.approval-timeout=30s")
                .withBean(EgressApprover.class, () -> approver)
                .withBean(EgressListener.class, () -> heard::add).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Engine engine = ctx.getBean(Engine.class);
                    assertThat(engine).isInstanceOf(SandboxEngine.class);
                    assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROXY);
                    assertThat(((EgressCapable) engine).egress()).isPresent();

                    String result = ToolCalls.call(ctx.getBean(CodeExecution.class), "c1", "workspace_exec",
                            "{\"command\":\"curl -sS -m 60 http://unlisted.test/\"}").resultText();
                    assertThat(result).contains("unlisted.test");
                    assertThat(asked).extracting(r -> r.target().host()).containsExactly("unlisted.test");
                    assertThat(heard).anySatisfy(e -> {
                        assertThat(e.target().host()).isEqualTo("unlisted.test");
                        assertThat(e.outcome()).isEqualTo(EgressEvent.Outcome.DENIED);
                    });
                });
    }

    @Test
    void should_refuse_to_guess_between_two_egress_approvers() {
        EgressApprover deny = EgressApprover.of(r -> EgressApproval.DENY);
        runner("codeexec.backend=sandbox", "codeexec.network.allow=pypi.org")
                .withBean("one", EgressApprover.class, () -> deny)
                .withBean("two", EgressApprover.class, () -> deny).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).hasStackTraceContaining("2 EgressApprover beans");
                });
    }
}
