package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Isolation;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.AuditLogListener;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.micrometer.MicrometerExecutionListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.local.LocalEngine;
import dev.langchain4j.service.tool.ToolProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configuration's beans, what replaces them, and each start-up error, with real engines where they start. */
class CodeExecAutoConfigurationTest {

    @TempDir
    Path dir;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                        "codeexec.local.base-dir=" + dir.resolve("workspaces"));
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Test
    void should_expose_the_engine_code_execution_tools_and_provider_for_the_local_backend() {
        runner().withPropertyValues("codeexec.backend=local").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(Engine.class)).isInstanceOf(LocalEngine.class);
            assertThat(ctx).hasSingleBean(CodeExecution.class).hasSingleBean(WorkspaceTools.class)
                    .hasSingleBean(ToolProvider.class).hasSingleBean(AuditLogListener.class)
                    .doesNotHaveBean(MicrometerExecutionListener.class);
            assertThat(ctx.getBean(ArtifactService.class)).isInstanceOf(FileSystemArtifactService.class);
            assertThat(ctx.getBean(WorkspaceTools.class)).isSameAs(ctx.getBean(CodeExecution.class).tools());
            assertThat(ToolCalls.call(ctx.getBean(CodeExecution.class), "c1", "workspace_exec",
                    "{\"command\":\"echo spring\"}").resultText()).contains("spring");
        });
    }

    @Test
    void should_close_the_engine_and_remove_its_workspaces_with_the_context() throws IOException {
        runner().withPropertyValues("codeexec.backend=local").run(ctx -> {
            ctx.getBean(CodeExecution.class).workspace("c1").putFile("work/kept.txt", "x");
            assertThat(files("kept.txt")).isTrue();
        });

        assertThat(files("kept.txt")).as("closing the context closed the engine, which removed its workspace")
                .isFalse();
    }

    private boolean files(String name) throws IOException {
        try (Stream<Path> s = Files.walk(dir.resolve("workspaces"))) {
            return s.anyMatch(p -> p.getFileName().toString().equals(name));
        }
    }

    @Test
    void should_apply_the_command_policy_of_the_properties() {
        runner().withPropertyValues("codeexec.backend=local", "codeexec.policy.allow=echo,ls").run(ctx -> {
            CodeExecution codeExec = ctx.getBean(CodeExecution.class);
            assertThat(ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"curl http://127.0.0.1:9\"}")
                    .attributes()).containsEntry("error", "policy");
            assertThat(ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"echo allowed\"}")
                    .resultText()).contains("allowed");
        });
    }

    @Test
    void should_give_way_to_the_applications_own_engine_and_artifact_store() {
        try (LocalEngine own = LocalEngine.builder().baseDir(dir.resolve("own")).build()) {
            InMemoryArtifactService store = new InMemoryArtifactService();
            runner().withBean(Engine.class, () -> own).withBean(ArtifactService.class, () -> store).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                assertThat(ctx.getBean(Engine.class)).isSameAs(own);
                assertThat(ctx.getBean(ArtifactService.class)).isSameAs(store);
            });
        }
    }

    @Test
    void should_record_metrics_when_the_application_has_a_meter_registry() {
        runner().withPropertyValues("codeexec.backend=local", "codeexec.audit-log=false")
                .withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
                    assertThat(ctx).hasSingleBean(MicrometerExecutionListener.class)
                            .doesNotHaveBean(AuditLogListener.class);
                    ToolCalls.call(ctx.getBean(CodeExecution.class), "c1", "workspace_exec", "{\"command\":\"true\"}");
                    assertThat(ctx.getBean(SimpleMeterRegistry.class).get(MicrometerExecutionListener.RUNS)
                            .tags("outcome", "success").timer().count()).isEqualTo(1);
                });
    }

    @Test
    void should_use_the_applications_approver_and_refuse_to_guess_between_two() {
        ExecutionApprover denyAll = ExecutionApprover.of(r -> ApprovalDecision.deny("nothing runs here"));
        runner().withPropertyValues("codeexec.backend=local").withBean("denyAll", ExecutionApprover.class, () -> denyAll)
                .run(ctx -> assertThat(ToolCalls.call(ctx.getBean(CodeExecution.class), "c1", "workspace_exec",
                        "{\"command\":\"true\"}").resultText()).startsWith("error: not approved: nothing runs here."));
        runner().withPropertyValues("codeexec.backend=local")
                .withBean("one", ExecutionApprover.class, () -> denyAll)
                .withBean("two", ExecutionApprover.class, ExecutionApprover::allowAll).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).hasStackTraceContaining("2 ExecutionApprover beans")
                            .hasStackTraceContaining("ExecutionApprovers.allOf");
                });
    }

    @Test
    void should_stay_away_when_disabled() {
        runner().withPropertyValues("codeexec.enabled=false").run(ctx ->
                assertThat(ctx).hasNotFailed().doesNotHaveBean(CodeExecution.class).doesNotHaveBean(Engine.class));
    }

    @Test
    void should_fail_at_start_up_without_a_backend() {
        runner().run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("codeexec.backend").hasMessageContaining("no backend is configured")
                    .hasMessageContaining("local, sandbox, container, jupyter, e2b or kubernetes");
        });
    }

    @Test
    void should_fail_at_start_up_with_an_unknown_backend_name() {
        runner().withPropertyValues("codeexec.backend=docker").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("codeexec.backend").hasMessageContaining("'docker' is not a backend");
        });
    }

    @Test
    void should_fail_at_start_up_with_invalid_values_naming_the_property() {
        String[][] cases = {
            {"codeexec.default-timeout=-5s", "codeexec.default-timeout", "must be positive"},
            {"codeexec.max-output-bytes=0", "codeexec.max-output-bytes", "must be positive"},
            {"codeexec.approval-timeout=0s", "codeexec.approval-timeout", "must be positive"},
            {"codeexec.default-timeout=20m", "codeexec.default-timeout", "must not exceed codeexec.max-timeout"},
            {"codeexec.workspace-idle-ttl=-1m", "codeexec.workspace-idle-ttl", "must not be negative"},
        };
        for (String[] c : cases) {
            runner().withPropertyValues("codeexec.backend=local", c[0]).run(ctx -> {
                assertThat(ctx).as(c[0]).hasFailed();
                assertThat(rootCause(ctx.getStartupFailure())).as(c[0])
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining(c[1]).hasMessageContaining(c[2]);
            });
        }
        runner().withPropertyValues("codeexec.backend=local", "codeexec.default-timeout=soon").run(ctx ->
                assertThat(ctx).as("a value that is no duration fails in Spring's binder").hasFailed());
    }

    @Test
    void should_fail_at_start_up_when_the_backends_module_is_absent() {
        runner().withPropertyValues("codeexec.backend=sandbox")
                .withClassLoader(new FilteredClassLoader("dev.codeexec.sandbox")).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(rootCause(ctx.getStartupFailure())).hasMessageContaining(
                            "codeexec.backend=sandbox needs the module dev.codeexec:langchain4j-codeexec-sandbox on "
                                    + "the class path");
                });
        runner().withPropertyValues("codeexec.backend=e2b")
                .withClassLoader(new FilteredClassLoader("dev.codeexec.e2b")).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(rootCause(ctx.getStartupFailure())).hasMessageContaining(
                            "needs the module dev.codeexec:langchain4j-codeexec-e2b");
                });
    }

    @Test
    void should_fail_at_start_up_with_an_invalid_backend_setting() {
        runner().withPropertyValues("codeexec.backend=sandbox", "codeexec.sandbox.profile=wide-open").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("codeexec.sandbox.profile").hasMessageContaining("wide-open");
        });
        runner().withPropertyValues("codeexec.backend=container").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).hasMessageContaining("codeexec.container.image");
        });
    }

    @Test
    void should_fail_at_start_up_naming_the_property_and_the_variable_when_e2b_has_no_api_key() {
        // E2B_API_KEY blanked in the context's environment, whatever the build's own environment has.
        runner().withPropertyValues("codeexec.backend=e2b", "E2B_API_KEY=").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("codeexec.e2b.api-key").hasMessageContaining("E2B_API_KEY")
                    .hasMessageContaining("https://e2b.dev/dashboard");
        });
    }

    @Test
    void should_fail_at_start_up_with_an_invalid_e2b_setting_naming_the_property_and_never_the_key() {
        String key = "e2b_0123456789abcdef_secret";
        String[][] cases = {
            {"codeexec.e2b.workspace-mode=per-request", "codeexec.e2b.workspace-mode",
                "use sandbox-per-workspace or shared-sandbox"},
            {"codeexec.e2b.sandbox-timeout=5s", "codeexec.e2b.sandbox-timeout", "must be at least 10 seconds"},
            {"codeexec.e2b.request-timeout=0s", "codeexec.e2b.request-timeout", "must be positive"},
            {"codeexec.e2b.api-url=ftp://example.invalid", "codeexec.backend=e2b: the engine could not start",
                "apiUrl ('ftp://example.invalid') must be an http or https URL"},
            {"codeexec.e2b.user=Bad User", "codeexec.backend=e2b: the engine could not start",
                "must be a Linux user name"},
        };
        for (String[] c : cases) {
            runner().withPropertyValues("codeexec.backend=e2b", "codeexec.e2b.api-key=" + key, c[0]).run(ctx -> {
                assertThat(ctx).as(c[0]).hasFailed();
                assertThat(ctx.getStartupFailure()).as(c[0]).hasStackTraceContaining(c[1])
                        .hasStackTraceContaining(c[2]);
                assertThat(stackTrace(ctx.getStartupFailure())).as(c[0]).doesNotContain(key);
            });
        }
    }

    @Test
    void should_build_the_e2b_engine_from_properties_without_contacting_e2b() {
        // Nothing listens on this port: a sandbox per workspace is created with the first workspace, not at start-up.
        runner().withPropertyValues("codeexec.backend=e2b", "codeexec.e2b.api-key=e2b_test",
                "codeexec.e2b.api-url=http://127.0.0.1:9", "codeexec.e2b.template=my-template",
                "codeexec.e2b.workspace-mode=SANDBOX_PER_WORKSPACE", "codeexec.e2b.sandbox-timeout=2m",
                "codeexec.e2b.metadata.team=analytics").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Engine engine = ctx.getBean(Engine.class);
                    assertThat(engine).isInstanceOf(E2bEngine.class);
                    assertThat(engine.describe().networkAllowed()).as("internet access off by default").isFalse();
                    assertThat(engine.describe().isolation()).isEqualTo(Isolation.REMOTE_VM);
                    assertThat(ctx.getBean(CodeExecProperties.class).getE2b().toString()).doesNotContain("e2b_test");
                });
        runner().withPropertyValues("codeexec.backend=e2b", "codeexec.e2b.api-key=e2b_test",
                "codeexec.e2b.api-url=http://127.0.0.1:9", "codeexec.e2b.internet-access=true").run(ctx ->
                assertThat(ctx.getBean(Engine.class).describe().networkAllowed()).isTrue());
    }

    private static String stackTrace(Throwable t) {
        java.io.StringWriter w = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(w));
        return w.toString();
    }

    @Test
    void should_fail_at_start_up_when_the_backend_cannot_start() {
        // A Docker endpoint on the loopback interface where nothing listens.
        runner().withPropertyValues("codeexec.backend=container", "codeexec.container.image=codeexec-python:bookworm",
                "codeexec.container.docker-host=tcp://127.0.0.1:9").run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).hasStackTraceContaining(
                            "codeexec.backend=container: the engine could not start");
                });
    }
}
