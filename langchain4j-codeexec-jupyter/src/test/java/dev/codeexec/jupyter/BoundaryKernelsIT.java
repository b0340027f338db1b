package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.Requirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernels behind the relay ({@link BoundaryKernels}), started as plain host processes through a launcher that plans
 * runs as the Jupyter engine does (the core's host runs): everything a sandbox or container engine gets, without the
 * boundary. Nothing asserts how long anything took; waits are generously bounded polls for an outcome.
 */
class BoundaryKernelsIT {

    static final String PYTHON = "/usr/bin/python3";

    private JupyterEngine host;
    private Workspace ws;
    private BoundaryKernels kernels;
    /** What the launcher does to the relay's run before it is planned: the identity, or a hostile replacement. */
    private volatile UnaryOperator<RunProgramSpec> tamper = UnaryOperator.identity();

    @BeforeAll
    static void requireKernel() {
        Requirements.require(Files.isExecutable(Path.of(PYTHON)) && JupyterTesting.imports(PYTHON, "ipykernel"),
                "/usr/bin/python3 with ipykernel (Debian: apt-get install python3-ipykernel)");
    }

    @BeforeEach
    void start() {
        host = JupyterEngine.create();
        ws = host.manager().createWorkspace("relay", WorkspacePolicy.DEFAULT);
        kernels = kernels(KernelOptions.builder().python(PYTHON).build());
    }

    @AfterEach
    void stop() {
        if (kernels != null) {
            kernels.close();
        }
        host.close();
    }

    private BoundaryKernels kernels(KernelOptions options) {
        return new BoundaryKernels("relaytest", options, (w, spec) -> host.prepare(w, tamper.apply(spec)), host.fs());
    }

    private BlockPrograms.Outcome cell(String code) {
        return cell(kernels, ws, code, Duration.ofSeconds(60));
    }

    static BlockPrograms.Outcome cell(BoundaryKernels k, Workspace w, String code, Duration timeout) {
        return k.cells(w).run(code, timeout, 1 << 20);
    }

    @Test
    void should_keep_state_across_cells_when_the_kernel_runs_behind_the_relay() {
        assertThat(cell("x = 6 * 7\nprint('set')").text()).isEqualTo("set\n");
        BlockPrograms.Outcome r = cell("x");
        assertThat(r.exitCode()).isZero();
        assertThat(r.text()).isEqualTo("42\n");
        BlockPrograms.Outcome err = cell("1/0");
        assertThat(err.exitCode()).isEqualTo(1);
        assertThat(err.text()).contains("ZeroDivisionError");
        assertThat(cell("import os\nprint(os.getcwd().endswith('/work'))").text()).isEqualTo("True\n");
    }

    @Test
    void should_run_the_kernel_on_unix_sockets_without_a_tcp_port() {
        BlockPrograms.Outcome r = cell("""
                import json, os
                conn = [a for a in open('/proc/self/cmdline', 'rb').read().decode().split('\\0') if a.endswith('.json')][0]
                d = os.path.dirname(conn)
                print(json.load(open(conn))['transport'] if os.path.exists(conn) else 'ipc?', oct(os.stat(d).st_mode & 0o777))
                """);
        assertThat(r.text()).as(r.text()).isIn("ipc 0o700\n", "ipc? 0o700\n");
        assertThat(cell("import os\nprint(sorted(f for f in os.listdir(os.path.dirname([a for a in open('/proc/self/"
                + "cmdline','rb').read().decode().split(chr(0)) if a.endswith('.json')][0])) if f.startswith('k-')))")
                .text()).isEqualTo("['k-1', 'k-2', 'k-3', 'k-4', 'k-5']\n");
    }

    /**
     * The look at {@code out/} through the relay: empty only for a real directory without entries, as the kernel's
     * side sees it after the cell; a file, a link (even to an empty directory) or no kernel: not empty, and the engine
     * collects as usual.
     */
    /** Long enough for the relay to answer on a loaded machine: the answer, not its speed, is under test. */
    private static final Duration ANSWER = Duration.ofSeconds(120);

    @Test
    void should_see_out_empty_through_the_relay_only_when_it_is_a_real_empty_directory() {
        assertThat(kernels.outputsSeenEmpty(ws, ANSWER)).as("no kernel yet").isFalse();
        cell("1+1");
        assertThat(kernels.outputsSeenEmpty(ws, ANSWER)).isTrue();

        cell("import os\nout = os.environ['OUTPUT_DIR']\nopen(out + '/a.txt', 'w').write('a')");
        assertThat(kernels.outputsSeenEmpty(ws, ANSWER)).as("a file in out/").isFalse();

        cell("os.remove(out + '/a.txt')\nos.rmdir(out)\nos.mkdir(out + '_real')\nos.symlink(out + '_real', out)");
        assertThat(kernels.outputsSeenEmpty(ws, ANSWER)).as("out/ a link to an empty directory").isFalse();

        // Positive control: the same empty directory at out/ itself.
        cell("os.remove(out)\nos.rename(out + '_real', out)");
        assertThat(kernels.outputsSeenEmpty(ws, ANSWER)).isTrue();
    }

    @Test
    void should_save_a_matplotlib_png_under_out() {
        JupyterTesting.requireMatplotlib();
        BlockPrograms.Outcome r = cell("""
                import matplotlib
                matplotlib.use('module://matplotlib_inline.backend_inline')
                import matplotlib.pyplot as plt
                plt.plot([1, 2, 3], [1, 4, 9])
                plt.show()
                """);
        assertThat(r.exitCode()).as(r.text()).isZero();
        assertThat(host.fs().list(ws, "out").stream().map(f -> f.path()).toList()).contains("out/display_1.png");
        byte[] png = host.fs().readFile(ws, "out/display_1.png", 0, 8).content();
        assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
    }

    @Test
    void should_interrupt_a_cell_past_its_timeout_and_keep_the_kernel() {
        cell("kept = 'before the loop'");
        BlockPrograms.Outcome r = cell(kernels, ws, "print('looping', flush=True)\nwhile True:\n    pass",
                Duration.ofSeconds(2));
        assertThat(r.timedOut()).isTrue();
        assertThat(r.text()).startsWith("looping\n").contains("KeyboardInterrupt")
                .contains("the kernel and its state are kept");
        assertThat(cell("kept").text()).isEqualTo("'before the loop'\n");
    }

    @Test
    void should_interrupt_the_kernel_through_the_relays_signal_frame() throws Exception {
        cell("kept = 1");
        var running = java.util.concurrent.CompletableFuture.supplyAsync(() -> cell(kernels, ws,
                "import time\nopen('started', 'w').close()\ntime.sleep(3600)", Duration.ofSeconds(600)));
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (host.fs().stat(ws, "work/started").isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        kernels.kernel(ws).signalInterrupt(); // the SIGNAL frame alone: no interrupt_request
        BlockPrograms.Outcome r = running.get(120, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.text()).contains("KeyboardInterrupt");
        assertThat(cell("kept").text()).isEqualTo("1\n");
    }

    @Test
    void should_report_a_killed_kernel_and_start_a_fresh_one_for_the_next_cell() {
        cell("lost = 1");
        BlockPrograms.Outcome r = cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)");
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.text()).contains("the kernel died while this cell ran").contains("are lost");
        assertThat(cell("'lost' in dir()").text()).isEqualTo("False\n");
    }

    @Test
    void should_report_a_kernel_killed_from_outside_between_cells() throws Exception {
        cell("lost = 1");
        long pid = hostPids()[0];
        Kernel before = kernels.kernel(ws);
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (before.alive() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(before.alive()).as("the relay reports the kernel's end").isFalse();
        BlockPrograms.Outcome r = cell("'lost' in dir()");
        assertThat(r.text()).startsWith("[the kernel of this workspace had stopped since the last cell (")
                .endsWith("False\n");
    }

    @Test
    void should_restart_the_kernel_on_request() {
        cell("gone = 1");
        kernels.restartKernel(ws);
        assertThat(cell("'gone' in dir()").text()).isEqualTo("False\n");
    }

    @Test
    void should_stop_an_idle_kernel_and_say_so_in_the_next_cell() throws Exception {
        kernels.close();
        kernels = kernels(KernelOptions.builder().python(PYTHON).idleTimeout(Duration.ofMillis(300)).build());
        cell("idle = 1");
        Kernel first = kernels.kernel(ws);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!kernels.stoppedIdle(ws) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(kernels.stoppedIdle(ws)).as("the idle kernel was stopped").isTrue();
        assertThat(first.alive()).isFalse();
        BlockPrograms.Outcome r = cell("'idle' in dir()");
        assertThat(r.text().lines().findFirst().orElseThrow())
                .startsWith("[the earlier kernel of this workspace was stopped after being idle for 300 ms")
                .contains("variables and imports of earlier cells are gone");
        assertThat(r.text()).endsWith("\nFalse\n");
    }

    @Test
    void should_end_the_kernel_and_keep_working_when_the_relay_writes_garbage_frames() {
        for (String garbage : List.of("bytes([1]+[0]*8) + bytes([255]*9)", "bytes([1]+[0]*8) + bytes([3,0,0,0,1,127,255,255,255])",
                "bytes([3,0,0,0,1,0,0,0,1,65])")) {
            tamper = spec -> RunProgramSpec.builder(PYTHON).args("-c",
                    "import os, sys\nos.write(1, " + garbage + ")\nsys.stdin.buffer.read()").cwd("work")
                    .timeout(spec.timeout()).build();
            Workspace other = host.manager().createWorkspace("hostile", WorkspacePolicy.DEFAULT);
            Throwable t = catchThrowable(() -> cell(kernels, other, "1 + 1", Duration.ofSeconds(30)));
            assertThat(t).as(garbage).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("broke the frame format");
            tamper = UnaryOperator.identity();
            assertThat(cell("1 + 1").text()).as("another workspace's kernel works").isEqualTo("2\n");
            assertThat(cell(kernels, other, "1 + 1", Duration.ofSeconds(60)).text()).isEqualTo("2\n");
            kernels.stopKernel(other);
        }
    }

    @Test
    void should_end_the_kernel_when_a_cell_writes_garbage_into_the_relays_pipes() {
        cell("lost = 1");
        BlockPrograms.Outcome r = cell("""
                import os
                relay = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1])  # the host's pid
                for fd in os.listdir(f'/proc/{relay}/fd'):
                    if int(fd) > 2 and os.readlink(f'/proc/{relay}/fd/{fd}').startswith('pipe:'):
                        try:
                            w = os.open(f'/proc/{relay}/fd/{fd}', os.O_WRONLY | os.O_NONBLOCK)
                            os.write(w, bytes([255] * 64))
                            os.close(w)
                        except OSError:
                            pass
                import time
                time.sleep(3600)
                """);
        assertThat(r.text()).contains("the kernel died while this cell ran");
        assertThat(cell("'lost' in dir()").text()).isEqualTo("False\n");
    }

    @Test
    void should_say_which_python_lacks_ipykernel(@TempDir Path dir) throws Exception {
        Path venv = dir.resolve("venv");
        Process p = new ProcessBuilder(PYTHON, "-m", "venv", "--without-pip", venv.toString()).inheritIO().start();
        Requirements.require(p.waitFor() == 0, "python3 -m venv (Debian: apt-get install python3-venv)");
        String python = venv.resolve("bin/python3").toString();
        kernels.close();
        kernels = kernels(KernelOptions.builder().python(python).build());
        Throwable t = catchThrowable(() -> cell("1 + 1"));
        assertThat(t).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("('" + python + "') cannot import ipykernel")
                .hasMessageContaining("apt-get install python3-ipykernel");
    }

    @Test
    void should_leave_no_process_behind_when_closed() throws Exception {
        String conn = connectionFile();
        long relay = hostPids()[1];
        kernels.close();
        assertThat(JupyterTesting.awaitNoProcessWith(conn, Duration.ofSeconds(60))).isEmpty();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (alive(relay) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(alive(relay)).as("the relay").isFalse();
        assertThat(Files.exists(Path.of(conn).getParent())).as("the relay's private directory").isFalse();
    }

    /** The kernel's connection file (its command line names it, in the relay's private directory). */
    private String connectionFile() {
        return cell("""
                conn = [a for a in open('/proc/self/cmdline', 'rb').read().decode().split('\\0') if a.endswith('.json')][0]
                print(conn)
                """).text().strip();
    }

    /** The host's pids of the workspace's kernel and of its relay (a PID namespace around them has its own). */
    private long[] hostPids() {
        List<String> procs = JupyterTesting.processesWith(connectionFile());
        assertThat(procs).hasSize(1);
        long kernel = Long.parseLong(procs.get(0).substring(0, procs.get(0).indexOf(':')));
        long relay = ProcessHandle.of(kernel).orElseThrow().parent().orElseThrow().pid();
        return new long[] {kernel, relay};
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && !zombie(pid);
    }

    private static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (java.io.IOException e) {
            return true;
        }
    }
}
