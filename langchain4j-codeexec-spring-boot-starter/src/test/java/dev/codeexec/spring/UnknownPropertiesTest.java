package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.Engine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Keys under {@code codeexec} that no property binds stop the start-up naming the nearest property; every valid
 * spelling (kebab-case, camelCase, list indexes, map entries, environment variables) starts as before.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesTest {

    @TempDir
    Path dir;

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                        "codeexec.local.base-dir=" + dir.resolve("workspaces"), "codeexec.audit-log=false",
                        "codeexec.backend=local")
                .withPropertyValues(properties);
    }

    /** The OS environment of the context, as the property source Spring makes of it; nothing else of the real one. */
    private ApplicationContextRunner withEnvironment(ApplicationContextRunner runner, Map<String, Object> variables) {
        return runner.withInitializer(ctx -> ctx.getEnvironment().getPropertySources().replace(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
                        StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables)));
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private void assertFails(String property, String... expected) {
        runner(property).run(ctx -> {
            assertThat(ctx).as(property).hasFailed();
            Throwable cause = rootCause(ctx.getStartupFailure());
            assertThat(cause).as(property).isInstanceOf(UnknownPropertiesException.class);
            for (String e : expected) {
                assertThat(cause.getMessage()).as(property).contains(e);
            }
        });
    }

    @Test
    void should_start_with_valid_keys_in_every_spelling_spring_binds() {
        runner("codeexec.sandbox.network=enabled", "codeexec.sandbox.rootDir=" + dir.resolve("unused"),
                "codeexec.default_timeout=7", "CODEEXEC.MAX-TIMEOUT=20m", "codeexec.policy.allow[0]=ls",
                "codeexec.policy.allow[1]=echo", "codeexec.policy.deny=rm,curl", "codeexec.e2b.metadata.team=x",
                "codeexec.e2b.metadata.cost-center=42", "codeexec.network.allow=", "codeexec.python-kernel.python=python3",
                "codeexec.kubernetes.readyTimeout=30", "codeexec.ignore-unknown-properties=false").run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(Engine.class);
                    CodeExecProperties p = ctx.getBean(CodeExecProperties.class);
                    assertThat(p.getDefaultTimeout()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(p.getMaxTimeout()).isEqualTo(Duration.ofMinutes(20));
                    assertThat(p.getPolicy().getAllow()).containsExactly("ls", "echo");
                    assertThat(p.getE2b().getMetadata()).containsOnlyKeys("team", "cost-center");
                    assertThat(p.getKubernetes().getReadyTimeout()).isEqualTo(Duration.ofSeconds(30));
                });
    }

    @Test
    void should_start_with_valid_keys_as_environment_variables_in_both_of_springs_forms(CapturedOutput output) {
        withEnvironment(runner(), Map.of("CODEEXEC_DEFAULTTIMEOUT", "9", "CODEEXEC_SANDBOX_ROOT_DIR", "/srv/sandbox",
                "CODEEXEC_E2B_METADATA_TEAM", "x", "CODEEXEC_POLICY_ALLOW_0_", "ls")).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CodeExecProperties p = ctx.getBean(CodeExecProperties.class);
                    assertThat(p.getDefaultTimeout()).isEqualTo(Duration.ofSeconds(9));
                    assertThat(p.getSandbox().getRootDir()).isEqualTo(Path.of("/srv/sandbox"));
                    assertThat(p.getE2b().getMetadata()).containsEntry("team", "x");
                    assertThat(p.getPolicy().getAllow()).containsExactly("ls");
                });
        assertThat(output).as("a variable that binds is not reported").doesNotContain("Unknown codeexec property");
    }

    @Test
    void should_fail_at_start_up_naming_a_misspelt_key_and_the_nearest_property() {
        assertFails("codeexec.sandbox.netwrok=enabled", "codeexec.sandbox.netwrok",
                "did you mean codeexec.sandbox.network?");
        assertFails("codeexec.default-timout=30s", "did you mean codeexec.default-timeout?");
        assertFails("codeexec.container.imgae=python:3.12", "did you mean codeexec.container.image?");
        assertFails("codeexec.sanbox.profile=read-only", "did you mean codeexec.sandbox.profile?");
        assertFails("codeexec.enabeld=true", "did you mean codeexec.enabled?");
    }

    @Test
    void should_report_the_misspelt_key_itself_before_what_its_absence_causes() {
        // Without the check, this fails for the missing codeexec.container.image, and the typo stays hidden.
        runner("codeexec.backend=container", "codeexec.container.imgae=python:3.12").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(UnknownPropertiesException.class)
                    .hasMessageContaining("did you mean codeexec.container.image?");
        });
    }

    @Test
    void should_suggest_in_kebab_case_for_a_camel_case_key_and_keep_list_indexes_and_map_keys() {
        assertFails("codeexec.sandbox.rootDirr=/tmp/x", "codeexec.sandbox.rootdirr",
                "did you mean codeexec.sandbox.root-dir?");
        assertFails("codeexec.policy.alow[0]=ls", "codeexec.policy.alow[0]", "did you mean codeexec.policy.allow[0]?");
        assertFails("codeexec.e2b.metdata.team=x", "did you mean codeexec.e2b.metadata.team?");
    }

    @Test
    void should_suggest_the_groups_that_have_the_setting_for_a_key_in_the_wrong_group() {
        assertFails("codeexec.image=python:3.12",
                "did you mean codeexec.container.image or codeexec.kubernetes.image?");
        assertFails("codeexec.docker-host=tcp://127.0.0.1:9", "did you mean codeexec.container.docker-host?");
    }

    @Test
    void should_say_so_when_no_property_is_close_and_list_every_unknown_key() {
        runner("codeexec.zzzz.qqqq=1", "codeexec.sandbox.netwrok=enabled").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure()).getMessage())
                    .contains("Unknown codeexec properties")
                    .contains("codeexec.zzzz.qqqq", "no property is close to it")
                    .contains("codeexec.sandbox.netwrok", "did you mean codeexec.sandbox.network?");
        });
    }

    @Test
    void should_never_show_the_value_of_an_unknown_key() {
        String key = "e2b_0123456789abcdef_secret";
        runner("codeexec.e2b.api-kye=" + key).run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable cause = rootCause(ctx.getStartupFailure());
            assertThat(cause.getMessage()).contains("did you mean codeexec.e2b.api-key?").doesNotContain(key);
            assertThat(Arrays.toString(cause.getStackTrace())).doesNotContain(key);
        });
    }

    @Test
    void should_only_warn_when_unknown_keys_are_ignored(CapturedOutput output) {
        runner("codeexec.sandbox.netwrok=enabled", "codeexec.ignore-unknown-properties=true").run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(Engine.class);
            assertThat(ctx.getBean(CodeExecProperties.class).getSandbox().getNetwork()).as("the typo binds nothing")
                    .isNull();
        });
        assertThat(warnings(output)).anySatisfy(line -> assertThat(line).contains("codeexec.sandbox.netwrok")
                .contains("did you mean codeexec.sandbox.network?"));
    }

    @Test
    void should_only_warn_for_keys_of_the_environment_and_system_properties_which_other_programs_share(
            CapturedOutput output) {
        ApplicationContextRunner r = withEnvironment(runner(), Map.of("CODEEXEC_SANDBOX_NETWROK", "enabled",
                "CODEEXEC_TEST_IMAGE", "python:3.12")).withInitializer(ctx -> ctx.getEnvironment().getPropertySources()
                .replace(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, new MapPropertySource(
                        StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
                        Map.of("codeexec.max-timout", "5m", "codeexec.strict", "true"))));
        r.run(ctx -> assertThat(ctx).hasNotFailed());
        assertThat(warnings(output))
                .anySatisfy(line -> assertThat(line).contains("codeexec.sandbox.netwrok")
                        .contains("CODEEXEC_SANDBOX_NETWROK").contains("did you mean codeexec.sandbox.network?"))
                .anySatisfy(line -> assertThat(line).contains("codeexec.max-timout")
                        .contains("did you mean codeexec.max-timeout?"))
                .as("a variable of another tool, close to no property, is not worth a warning")
                .noneSatisfy(line -> assertThat(line).containsAnyOf("codeexec.strict", "codeexec.test.image"));

        // Positive control: the same key in the application's own properties stops the start-up.
        r.withPropertyValues("codeexec.max-timout=5m").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(UnknownPropertiesException.class)
                    .hasMessageContaining("codeexec.max-timout").hasMessageNotContaining("netwrok");
        });
    }

    @Test
    void should_not_check_when_code_execution_is_disabled() {
        runner("codeexec.enabled=false", "codeexec.sandbox.netwrok=enabled").run(ctx ->
                assertThat(ctx).hasNotFailed().doesNotHaveBean(Engine.class));
    }

    @Test
    void should_count_a_swap_of_neighbours_as_one_edit() {
        assertThat(UnknownProperties.distance("netwrok", "network")).isEqualTo(1);
        assertThat(UnknownProperties.distance("timout", "timeout")).isEqualTo(1);
        assertThat(UnknownProperties.distance("", "abc")).isEqualTo(3);
        assertThat(UnknownProperties.distance("kitten", "sitting")).isEqualTo(3);
        assertThat(UnknownProperties.distance("same", "same")).isZero();
    }

    private static List<String> warnings(CapturedOutput output) {
        return output.toString().lines().filter(l -> l.contains("WARN")).toList();
    }
}
