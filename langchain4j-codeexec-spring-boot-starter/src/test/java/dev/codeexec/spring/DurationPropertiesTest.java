package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Every duration under {@code codeexec.*} reads a bare number as seconds, as its documentation says, and still takes
 * a unit or the ISO-8601 form. Before, {@code codeexec.default-timeout=5} was five milliseconds and every command
 * timed out.
 */
class DurationPropertiesTest {

    @TempDir
    Path dir;

    /** The duration properties of the generated metadata, so that one added later is covered without a list here. */
    private static List<String> durationProperties() throws Exception {
        List<String> out = new ArrayList<>();
        ConfigurationMetadataTest.types().forEach((name, type) -> {
            if (type.equals("java.time.Duration")) {
                out.add(name);
            }
        });
        return out;
    }

    /** codeexec.python-kernel.idle-timeout as the bean path pythonKernel.idleTimeout. */
    private static String beanPath(String property) {
        Matcher m = Pattern.compile("-([a-z0-9])").matcher(property.substring("codeexec.".length()));
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, m.group(1).toUpperCase());
        }
        return m.appendTail(b).toString();
    }

    private static Duration bind(String property, String value) {
        CodeExecProperties p = new Binder(new MapConfigurationPropertySource(Map.of(property, value)))
                .bind("codeexec", Bindable.ofInstance(new CodeExecProperties())).get();
        return (Duration) new BeanWrapperImpl(p).getPropertyValue(beanPath(property));
    }

    @Test
    void should_read_a_bare_number_as_seconds_and_keep_units_and_iso_8601_for_every_duration_property()
            throws Exception {
        List<String> durations = durationProperties();
        assertThat(durations).as("the metadata's duration properties").hasSizeGreaterThanOrEqualTo(14)
                .contains("codeexec.default-timeout", "codeexec.python-kernel.idle-timeout",
                        "codeexec.network.connect-timeout", "codeexec.kubernetes.ttl");
        for (String property : durations) {
            assertThat(bind(property, "5")).as(property + "=5").isEqualTo(Duration.ofSeconds(5));
            assertThat(bind(property, "5ms")).as(property + "=5ms").isEqualTo(Duration.ofMillis(5));
            assertThat(bind(property, "2m")).as(property + "=2m").isEqualTo(Duration.ofMinutes(2));
            assertThat(bind(property, "PT1.5S")).as(property + "=PT1.5S").isEqualTo(Duration.ofMillis(1500));
        }
    }

    @Test
    void should_run_commands_with_a_five_second_default_timeout_when_given_5() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.backend=local", "codeexec.audit-log=false",
                        "codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                        "codeexec.local.base-dir=" + dir.resolve("workspaces"), "codeexec.default-timeout=5",
                        "codeexec.workspace-idle-ttl=0")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CodeExecProperties p = ctx.getBean(CodeExecProperties.class);
                    assertThat(p.getDefaultTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(p.getWorkspaceIdleTtl()).as("0 still keeps workspaces until closed").isZero();
                    assertThat(ToolCalls.call(ctx.getBean(CodeExecution.class), "c1", "workspace_exec",
                            "{\"command\":\"echo spring\"}").resultText())
                            .startsWith("exit_code: 0 | timed_out: false").contains("spring");
                });
    }

    @Test
    void should_still_take_milliseconds_when_the_unit_says_so() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.backend=local", "codeexec.audit-log=false",
                        "codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                        "codeexec.local.base-dir=" + dir.resolve("workspaces"), "codeexec.default-timeout=5ms",
                        "codeexec.max-timeout=PT10M")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CodeExecProperties p = ctx.getBean(CodeExecProperties.class);
                    assertThat(p.getDefaultTimeout()).isEqualTo(Duration.ofMillis(5));
                    assertThat(p.getMaxTimeout()).isEqualTo(Duration.ofMinutes(10));
                });
    }
}
