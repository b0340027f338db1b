package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * What an application prints when it cannot start: Spring Boot's short "APPLICATION FAILED TO START" report with the
 * fix, from the failure analyzers of {@code META-INF/spring.factories}, and no stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTest {

    @TempDir
    Path dir;

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(CodeExecAutoConfiguration.class)
    static class App {
    }

    private ConfigurableApplicationContext run(ClassLoader loader, String... properties) {
        SpringApplication app = new SpringApplication(new DefaultResourceLoader(loader), App.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.setBannerMode(Banner.Mode.OFF);
        String[] args = Stream.concat(Stream.of("--codeexec.artifacts.dir=" + dir.resolve("artifacts"),
                "--codeexec.local.base-dir=" + dir.resolve("workspaces"), "--codeexec.audit-log=false"),
                Arrays.stream(properties)).toArray(String[]::new);
        return app.run(args);
    }

    /** The report's lines, from its heading on. */
    private static String report(CapturedOutput output) {
        String all = output.toString();
        int start = all.indexOf("APPLICATION FAILED TO START");
        assertThat(start).as("Spring Boot's failure report in:\n" + all).isNotNegative();
        return all.substring(start);
    }

    @Test
    void should_report_a_missing_backend_module_with_the_dependency_to_add(CapturedOutput output) {
        assertThatThrownBy(() -> run(new FilteredClassLoader("dev.codeexec.container"), "--codeexec.backend=container",
                "--codeexec.container.image=python:3.12")).hasRootCauseInstanceOf(MissingBackendModuleException.class);

        String report = report(output);
        assertThat(report).contains("Description:", "codeexec.backend=container needs the module "
                + "dev.codeexec:langchain4j-codeexec-container, which is not on the class path")
                .contains("Action:", "<groupId>dev.codeexec</groupId>",
                        "<artifactId>langchain4j-codeexec-container</artifactId>",
                        "implementation 'dev.codeexec:langchain4j-codeexec-container'");
        assertThat(output.toString()).as("no stack trace").doesNotContain("\tat ", "Caused by:");
        assertThat(output.toString().lines().count()).as("a short report").isLessThan(40);
    }

    @Test
    void should_report_unknown_keys_with_where_they_are_set_and_the_nearest_property(CapturedOutput output)
            throws Exception {
        Path properties = Files.writeString(dir.resolve("application.properties"),
                "codeexec.backend=local\ncodeexec.sandbox.netwrok=enabled\n");
        assertThatThrownBy(() -> run(getClass().getClassLoader(), "--spring.config.location=file:" + properties))
                .hasRootCauseInstanceOf(UnknownPropertiesException.class);

        String report = report(output);
        assertThat(report).contains("Description:", "Unknown codeexec property", "codeexec.sandbox.netwrok",
                        "application.properties] - 2:", "did you mean codeexec.sandbox.network?")
                .contains("Action:", "codeexec.ignore-unknown-properties=true");
        assertThat(output.toString()).as("no stack trace").doesNotContain("\tat ", "Caused by:");
    }

    @Test
    void should_report_an_invalid_value_with_springs_own_analyzer_naming_the_property(CapturedOutput output) {
        assertThatThrownBy(() -> run(getClass().getClassLoader(), "--codeexec.backend=local",
                "--codeexec.default-timeout=-5"));

        assertThat(report(output)).contains("codeexec.default-timeout", "must be positive");
        assertThat(output.toString()).as("no stack trace").doesNotContain("\tat ", "Caused by:");
    }

    @Test
    void should_start_with_the_same_file_once_the_key_is_corrected(CapturedOutput output) throws Exception {
        Path properties = Files.writeString(dir.resolve("application.properties"),
                "codeexec.backend=local\ncodeexec.sandbox.network=enabled\ncodeexec.default-timeout=5\n");
        try (ConfigurableApplicationContext ctx = run(getClass().getClassLoader(),
                "--spring.config.location=file:" + properties)) {
            assertThat(ctx.getBean(CodeExecProperties.class).getDefaultTimeout()).hasSeconds(5);
        }
        assertThat(output.toString()).doesNotContain("APPLICATION FAILED TO START");
    }
}
