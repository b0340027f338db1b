package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Cells past their time limit: interrupted with the kernel and its state kept, or, when the kernel does not return to
 * idle, stopped with the state reported lost. The time limits are short so the tests run quickly; nothing asserts how
 * long anything took.
 */
class JupyterInterruptIT extends KernelFixture {

    JupyterInterruptIT() {
        super("interrupt", () -> JupyterEngine.builder().interruptGrace(Duration.ofSeconds(10)).build());
    }

    @Test
    void should_interrupt_an_endless_loop_and_keep_the_kernel_and_its_state() {
        cell(engine, ws, "kept = 'before the loop'");

        CodeExecutionResult r = cell(engine, ws, "print('looping', flush=True)\nwhile True:\n    pass",
                Duration.ofSeconds(3));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.output()).startsWith("looping\n").contains("KeyboardInterrupt")
                .contains("ran past its time limit of 3 s and was interrupted; the kernel and its state are kept");
        CodeExecutionResult after = cell(engine, ws, "kept");
        assertThat(after.exitCode()).isZero();
        assertThat(after.output()).isEqualTo("'before the loop'\n");
    }

    @Test
    void should_interrupt_the_processes_a_cell_started_too() throws Exception {
        String marker = "3" + System.nanoTime() % 100000 + ".5";
        CodeExecutionResult r = cell(engine, ws, "import subprocess\nsubprocess.run(['sleep', '" + marker + "'])",
                Duration.ofSeconds(2));

        assertThat(r.timedOut()).isTrue();
        // The kernel leads its own process group, so the interrupt reaches the child as well: either the kernel
        // stops with KeyboardInterrupt first, or the child's SIGINT ends the wait.
        assertThat(r.output()).containsAnyOf("KeyboardInterrupt", "returncode=-2")
                .contains("the kernel and its state are kept");
        assertThat(JupyterTesting.awaitNoProcessWith("sleep " + marker, Duration.ofSeconds(30))).isEmpty();
        assertThat(cell(engine, ws, "print('usable')").output()).isEqualTo("usable\n");
    }

    @Test
    void should_stop_the_kernel_and_say_the_state_is_lost_when_the_cell_ignores_interrupts() {
        JupyterEngine quick = JupyterEngine.builder().interruptGrace(Duration.ofMillis(500)).build();
        try {
            Workspace w = quick.manager().createWorkspace("stubborn", WorkspacePolicy.DEFAULT);
            cell(quick, w, "lost = 1");
            Path file = quick.kernelConnectionFile(w);

            CodeExecutionResult r = cell(quick, w, """
                    import signal, time
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    while True:
                        time.sleep(0.05)
                    """, Duration.ofSeconds(5)); // ample time to reach the second line before the interrupt

            assertThat(r.timedOut()).isTrue();
            assertThat(r.exitCode()).isEqualTo(-1);
            assertThat(r.output()).contains("the kernel did not return to idle, so it was stopped")
                    .contains("state of this workspace's kernel are lost");
            assertThat(JupyterTesting.processesWith(file.toString())).as("the stuck kernel").isEmpty();
            CodeExecutionResult fresh = cell(quick, w, "'lost' in dir()");
            assertThat(fresh.exitCode()).isZero();
            assertThat(fresh.output()).as("a fresh kernel, not the stuck one").isEqualTo("False\n");
        } finally {
            quick.close();
        }
    }

    @Test
    void should_interrupt_the_cell_when_the_waiting_thread_is_interrupted() throws Exception {
        cell(engine, ws, "kept = 7");
        Thread caller = Thread.currentThread();
        CompletableFuture<Void> interrupter = CompletableFuture.runAsync(() -> {
            // Waits for the cell to be running (it writes a file), then interrupts the waiting thread.
            Path started = Path.of(ws.path(), "work/started");
            try {
                while (!Files.exists(started)) {
                    TimeUnit.MILLISECONDS.sleep(20);
                }
            } catch (InterruptedException e) {
                return;
            }
            caller.interrupt();
        });

        Throwable t = catchThrowable(() -> cell(engine, ws, "open('started', 'w').close()\nwhile True:\n    pass",
                Duration.ofMinutes(5)));
        boolean interrupted = Thread.interrupted();
        interrupter.get(1, TimeUnit.MINUTES);

        assertThat(interrupted).as("the interrupt flag is kept").isTrue();
        assertThat(t).isInstanceOf(CodeExecException.class).hasMessageContaining("interrupted while waiting for a cell")
                .hasMessageContaining("the cell was interrupted");
        assertThat(cell(engine, ws, "kept").output()).isEqualTo("7\n");
    }
}
