package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.FileTrees;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel's life: started at the first cell, replaced when it dies (by its own hand, killed from outside, frozen),
 * restarted on request, stopped with its workspace and with the engine, and gone when the JVM dies.
 */
class JupyterKernelLifecycleIT extends KernelFixture {

    JupyterKernelLifecycleIT() {
        // Short enough for the frozen-kernel test, long enough that a busy machine does not look like a dead kernel.
        super("life", () -> JupyterEngine.builder().heartbeatInterval(Duration.ofMillis(250))
                .heartbeatTimeout(Duration.ofSeconds(5)).build());
    }

    @Test
    void should_start_the_kernel_at_the_first_cell_and_reuse_it() {
        assertThat(engine.kernel(ws)).isNull();
        cell(engine, ws, "import os\npid = os.getpid()");
        Kernel first = engine.kernel(ws);

        cell(engine, ws, "x = 1");

        assertThat(first).isNotNull();
        assertThat(engine.kernel(ws)).isSameAs(first);
        assertThat(first.info().language()).isEqualTo("python");
        assertThat(first.info().protocolVersion()).startsWith("5.");
        assertThat(Files.exists(first.connectionFile())).as("the key is not left on disk once the kernel is ready")
                .isFalse();
    }

    @Test
    void should_report_a_kernel_that_exits_during_a_cell_and_start_a_fresh_one() {
        cell(engine, ws, "state = 'gone soon'");

        CodeExecutionResult r = cell(engine, ws, "import os\nprint('bye', flush=True)\nos._exit(3)");

        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).contains("the kernel died while this cell ran: the kernel process exited with status 3")
                .contains("the next cell starts a fresh kernel");
        CodeExecutionResult next = cell(engine, ws, "'state' in dir()");
        assertThat(next.exitCode()).isZero();
        assertThat(next.output()).as("no notice again: the last result said so").isEqualTo("False\n");
    }

    @Test
    void should_notice_a_kernel_killed_between_cells_and_say_so_in_the_next_result() throws Exception {
        cell(engine, ws, "state = 1");
        Kernel k = engine.kernel(ws);
        for (String p : JupyterTesting.processesWith(k.connectionFile().toString())) {
            new ProcessBuilder("kill", "-KILL", p.substring(0, p.indexOf(':'))).start().waitFor();
        }
        awaitDeath(k);

        CodeExecutionResult r = cell(engine, ws, "'state' in dir()");

        assertThat(k.deathReason()).contains("killed by signal 9 (SIGKILL)");
        assertThat(r.exitCode()).isZero();
        assertThat(r.output()).startsWith("[the kernel of this workspace had stopped since the last cell (the kernel "
                + "process was killed by signal 9 (SIGKILL)); this cell ran in a fresh kernel").endsWith("False\n");
    }

    @Test
    void should_declare_a_kernel_that_stops_answering_heartbeats_dead_and_kill_it() throws Exception {
        cell(engine, ws, "state = 1");
        Path file = engine.kernelConnectionFile(ws);
        List<String> procs = JupyterTesting.processesWith(file.toString());
        assertThat(procs).isNotEmpty();
        for (String p : procs) {
            new ProcessBuilder("kill", "-STOP", p.substring(0, p.indexOf(':'))).start().waitFor();
        }

        CodeExecutionResult r = cell(engine, ws, "state", Duration.ofMinutes(5));

        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).contains("the kernel died while this cell ran: the kernel stopped answering heartbeats");
        assertThat(JupyterTesting.awaitNoProcessWith(file.toString(), Duration.ofSeconds(30))).isEmpty();
        assertThat(cell(engine, ws, "'state' in dir()").output()).isEqualTo("False\n");
    }

    @Test
    void should_restart_the_kernel_on_request_and_keep_the_files() throws Exception {
        cell(engine, ws, "state = 1\nopen('kept.txt', 'w').write('file')");
        Path oldFile = engine.kernelConnectionFile(ws);

        engine.restartKernel(ws);

        assertThat(engine.kernelConnectionFile(ws)).isNotNull().isNotEqualTo(oldFile);
        assertThat(JupyterTesting.awaitNoProcessWith(oldFile.toString(), Duration.ofSeconds(30))).isEmpty();
        CodeExecutionResult r = cell(engine, ws, "print('state' in dir(), open('kept.txt').read())");
        assertThat(r.output()).isEqualTo("False file\n");
    }

    @Test
    void should_end_a_running_cell_as_lost_when_the_kernel_is_restarted_meanwhile() throws Exception {
        cell(engine, ws, "import time");
        CompletableFuture<CodeExecutionResult> running = CompletableFuture.supplyAsync(() -> cell(engine, ws,
                "open('started', 'w').close()\ntime.sleep(600)", Duration.ofMinutes(20)));
        Path started = Path.of(ws.path(), "work/started");
        while (!Files.exists(started)) {
            TimeUnit.MILLISECONDS.sleep(20);
        }

        engine.restartKernel(ws);
        CodeExecutionResult r = running.get(2, TimeUnit.MINUTES);

        assertThat(r.output()).contains("the kernel died while this cell ran: the kernel was restarted on request");
        assertThat(cell(engine, ws, "'time' in dir()").output()).isEqualTo("False\n");
    }

    @Test
    void should_stop_the_kernel_when_its_workspace_is_removed() throws Exception {
        cell(engine, ws, "x = 1");
        Path file = engine.kernelConnectionFile(ws);
        Kernel k = engine.kernel(ws);

        engine.manager().cleanup(ws);

        assertThat(k.exitStatus()).as("a shutdown_request, answered: the kernel exits by itself").isZero();
        assertThat(JupyterTesting.awaitNoProcessWith(file.toString(), Duration.ofSeconds(30))).isEmpty();
        assertThatThrownBy(() -> cell(engine, ws, "x")).isInstanceOf(WorkspaceGoneException.class);
        engine.manager().cleanup(ws); // idempotent
    }

    @Test
    void should_kill_a_kernel_that_does_not_exit_after_its_shutdown_request() throws Exception {
        // The kernel answers the shutdown request, then hangs in an exit handler.
        cell(engine, ws, "import atexit, time\natexit.register(time.sleep, 600)");
        Path file = engine.kernelConnectionFile(ws);
        Kernel k = engine.kernel(ws);

        engine.manager().cleanup(ws);

        assertThat(k.exitStatus()).as("killed after the bounded wait").isEqualTo(128 + 9);
        assertThat(JupyterTesting.awaitNoProcessWith(file.toString(), Duration.ofSeconds(30))).isEmpty();
    }

    @Test
    void should_leave_no_kernel_process_and_no_connection_file_after_close() throws Exception {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        cell(engine, ws, "x = 1");
        cell(engine, other, "y = 2");
        String marker = engine.stateDir().toString();
        assertThat(JupyterTesting.processesWith(marker)).as("positive control: kernels run").isNotEmpty();

        engine.close();

        assertThat(JupyterTesting.awaitNoProcessWith(marker, Duration.ofSeconds(30))).isEmpty();
        assertThat(engine.stateDir()).doesNotExist();
        assertThatThrownBy(() -> cell(engine, ws, "x")).isInstanceOf(CodeExecException.class)
                .hasMessageContaining("closed");
        engine.close(); // idempotent
    }

    @Test
    void should_not_leave_a_kernel_behind_when_the_jvm_is_killed(@TempDir Path base) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                JupyterKernelHolder.class.getName(), base.toString()).redirectErrorStream(true).start();
        String marker;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        if (line.startsWith("READY ")) {
                            return line.substring(6);
                        }
                    }
                    return null;
                } catch (java.io.IOException e) {
                    return null;
                }
            });
            marker = ready.get(3, TimeUnit.MINUTES);
            assertThat(marker).as("the child JVM started a kernel").isNotNull();
            assertThat(JupyterTesting.processesWith(marker)).as("positive control: its kernel runs").isNotEmpty();
        } finally {
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no close()
            child.waitFor(1, TimeUnit.MINUTES);
        }

        assertThat(JupyterTesting.awaitNoProcessWith(marker, Duration.ofSeconds(60))).isEmpty();
        // What a killed JVM cannot remove: its state directory (the connection file was deleted at the handshake).
        assertThat(Path.of(marker)).isEmptyDirectory();
        FileTrees.deleteTree(Path.of(marker));
    }

    private static void awaitDeath(Kernel k) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (k.alive() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(20);
        }
        assertThat(k.alive()).isFalse();
    }
}
