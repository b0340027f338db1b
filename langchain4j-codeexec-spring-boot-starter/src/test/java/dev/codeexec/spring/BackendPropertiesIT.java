package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.container.ContainerEngine;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.e2b.FakeE2b;
import dev.codeexec.e2b.FakeTesting;
import dev.codeexec.engine.Engine;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.testing.Requirements;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Each real backend configured by properties alone, one command run through its tools. A backend this machine lacks is
 * skipped with the reason (and fails in strict mode), as in the backends' own modules.
 */
class BackendPropertiesIT {

    static final String IMAGE = System.getenv().getOrDefault("CODEEXEC_TEST_IMAGE", "codeexec-python:bookworm");

    @TempDir
    Path dir;

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"), "codeexec.audit-log=false")
                .withPropertyValues(properties);
    }

    private static String exec(CodeExecution codeExec, String command) {
        ToolExecutionResult r = ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"" + command + "\"}");
        assertThat(r.isError()).as(r.resultText()).isFalse();
        return r.resultText();
    }

    @Test
    void should_run_in_the_sandbox_configured_by_properties() {
        Requirements.requireCommand("bwrap");
        // The default sandbox root: a new folder below the system temporary directory, which the sandbox user can
        // reach (a JUnit temporary folder is private to root).
        runner("codeexec.backend=sandbox", "codeexec.sandbox.network=restricted").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(Engine.class)).isInstanceOf(SandboxEngine.class);
                    assertThat(ctx.getBean(Engine.class).describe().networkAllowed()).isFalse();
                    assertThat(exec(ctx.getBean(CodeExecution.class), "echo from-sandbox")).contains("from-sandbox");
                });
    }

    @Test
    void should_keep_python_state_in_the_sandbox_kernel_when_the_python_kernel_is_enabled() {
        Requirements.requireCommand("bwrap");
        runner("codeexec.backend=sandbox", "codeexec.python-kernel.enabled=true",
                "codeexec.python-kernel.idle-timeout=10m").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(Engine.class).describe().statefulCells()).isTrue();
                    CodeExecution codeExec = ctx.getBean(CodeExecution.class);
                    ToolCalls.call(codeExec, "c1", "execute_code", "{\"language\":\"python\",\"code\":\"x = 6 * 7\"}");
                    ToolExecutionResult r = ToolCalls.call(codeExec, "c1", "execute_code",
                            "{\"language\":\"python\",\"code\":\"print(x)\"}");
                    assertThat(r.isError()).as(r.resultText()).isFalse();
                    assertThat(r.resultText()).contains("42");
                });
    }

    @Test
    void should_refuse_the_python_kernel_on_a_backend_without_one() {
        runner("codeexec.backend=local", "codeexec.python-kernel.enabled=true").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("codeexec.python-kernel.enabled")
                    .hasMessageContaining("sandbox or container");
        });
    }

    @Test
    void should_run_in_a_jupyter_kernel_configured_by_properties() throws Exception {
        Requirements.require(importsIpykernel("/usr/bin/python3"), "/usr/bin/python3 with ipykernel "
                + "(Debian: apt-get install python3-ipykernel)");
        runner("codeexec.backend=jupyter", "codeexec.jupyter.base-dir=" + dir.resolve("jupyter"),
                "codeexec.jupyter.python=/usr/bin/python3").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(Engine.class)).isInstanceOf(JupyterEngine.class);
                    assertThat(exec(ctx.getBean(CodeExecution.class), "echo from-jupyter")).contains("from-jupyter");
                });
    }

    @Test
    void should_run_in_a_container_configured_by_properties() throws Exception {
        Requirements.require(imagePresent(), "a Docker engine with the image " + IMAGE + " (./scripts/test builds it)");
        runner("codeexec.backend=container", "codeexec.container.image=" + IMAGE,
                "codeexec.container.memory-bytes=268435456").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(Engine.class)).isInstanceOf(ContainerEngine.class);
                    assertThat(exec(ctx.getBean(CodeExecution.class), "echo from-container")).contains("from-container");
                });
    }

    /**
     * The e2b backend against the e2b module's fake E2B on the loopback interface: the key from the E2B_API_KEY
     * variable, the URLs and the fake's user and folder from properties; the sandbox is killed with the context.
     */
    @Test
    void should_run_in_an_e2b_sandbox_configured_by_properties() throws Exception {
        FakeTesting.requireHost();
        try (FakeE2b fake = new FakeE2b(dir.resolve("e2b"))) {
            runner("codeexec.backend=e2b", "E2B_API_KEY=" + FakeE2b.API_KEY, "codeexec.e2b.api-url=" + fake.url(),
                    "codeexec.e2b.sandbox-url=" + fake.url(), "codeexec.e2b.user=root",
                    "codeexec.e2b.base-dir=" + dir.resolve("e2b"), "codeexec.e2b.metadata.app=spring-test").run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        assertThat(ctx.getBean(Engine.class)).isInstanceOf(E2bEngine.class);
                        assertThat(exec(ctx.getBean(CodeExecution.class), "echo from-e2b")).contains("from-e2b");
                        assertThat(fake.live()).hasSize(1);
                    });
            assertThat(fake.created()).hasSize(1);
            assertThat(fake.live()).as("closing the context killed the sandbox").isEmpty();
        }
    }

    private static boolean importsIpykernel(String python) throws Exception {
        if (!java.nio.file.Files.isExecutable(Path.of(python))) {
            return false;
        }
        Process p = new ProcessBuilder(python, "-c", "import ipykernel").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    static boolean imagePresent() throws Exception {
        String docker = Requirements.findCommand("docker");
        if (docker == null) {
            return false;
        }
        Process p = new ProcessBuilder(docker, "image", "inspect", IMAGE).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return false;
        }
        return p.exitValue() == 0;
    }
}
