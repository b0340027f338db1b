package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The Jupyter engine's idle timeout: a kernel idle that long is stopped, and the next cell says its state is gone.
 * The timeout is short so the test runs quickly; it waits (bounded) for the outcome and asserts no timing.
 */
class JupyterIdleTimeoutIT extends KernelFixture {

    JupyterIdleTimeoutIT() {
        super("idle", () -> JupyterEngine.builder().idleTimeout(Duration.ofMillis(300)).build());
    }

    @Test
    void should_stop_an_idle_kernel_and_start_a_fresh_one_that_says_so() throws Exception {
        cell(engine, ws, "idle = 1");
        Kernel first = engine.kernel(ws);
        assertThat(first).isNotNull();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (engine.kernel(ws) != null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(engine.kernel(ws)).as("the idle kernel was taken away").isNull();

        CodeExecutionResult r = cell(engine, ws, "'idle' in dir()");

        assertThat(first.alive()).isFalse();
        assertThat(r.output().lines().findFirst().orElseThrow())
                .isEqualTo("[the earlier kernel of this workspace was stopped after being idle for 300 ms; this cell "
                        + "ran in a fresh kernel: variables and imports of earlier cells are gone]");
        assertThat(r.output()).endsWith("\nFalse\n");
        assertThat(JupyterTesting.processesWith(first.connectionFile().toString())).isEmpty();
    }
}
