package dev.codeexec.governance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Micrometer is optional: the core runs tool calls with events and the audit log in a class loader that has every
 * jar of the test class path except Micrometer's, and there the metrics listener alone fails to load.
 */
class NoMicrometerTest {

    @TempDir
    Path base;

    /** Runs in the Micrometer-free class loader: one tool call with the audit listener, on the local engine. */
    public static final class Scenario implements Supplier<String> {
        @Override
        public String get() {
            Path dir = Path.of(System.getProperty("codeexec.test.base"));
            try (dev.codeexec.local.LocalEngine engine = dev.codeexec.local.LocalEngine.builder().baseDir(dir).build();
                 dev.codeexec.langchain4j.CodeExecution codeExec = dev.codeexec.langchain4j.CodeExecution.builder()
                         .engine(engine).listener(AuditLogListener.create()).listener(new RecordingListener())
                         .approver(ExecutionApprovers.denyNetworkEnabledRuns()).build()) {
                String denied = dev.codeexec.langchain4j.ToolCalls.call(codeExec, "c1", "workspace_exec",
                        "{\"command\":\"echo hi\"}").resultText();
                String written = dev.codeexec.langchain4j.ToolCalls.call(codeExec, "c1", "workspace_write_file",
                        "{\"path\":\"work/a.txt\",\"content\":\"x\"}").resultText();
                return denied + "\n" + written;
            }
        }
    }

    @Test
    void should_run_tools_events_and_approvals_without_micrometer_on_the_class_path() throws Exception {
        List<URL> urls = new ArrayList<>();
        int dropped = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.contains("micrometer")) {
                dropped++;
            } else {
                urls.add(url(entry));
            }
        }
        assertThat(dropped).as("the test class path has Micrometer, so leaving it out means something").isPositive();
        System.setProperty("codeexec.test.base", Files.createDirectories(base.resolve("engine")).toString());
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader))
                    .isInstanceOf(ClassNotFoundException.class);

            @SuppressWarnings("unchecked")
            Supplier<String> scenario = (Supplier<String>) loader.loadClass(Scenario.class.getName())
                    .getDeclaredConstructor().newInstance();
            String out = scenario.get();

            assertThat(out).contains("error: not approved: programs may only run where they have no network access")
                    .contains("created work/a.txt");
            assertThatThrownBy(() -> loader.loadClass(
                    "dev.codeexec.governance.micrometer.MicrometerExecutionListener").getDeclaredConstructors())
                    .as("positive control: the one class that needs Micrometer cannot load here")
                    .isInstanceOf(NoClassDefFoundError.class);
        } finally {
            System.clearProperty("codeexec.test.base");
        }
    }

    private static URL url(String entry) {
        try {
            return Path.of(entry).toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        }
    }
}
