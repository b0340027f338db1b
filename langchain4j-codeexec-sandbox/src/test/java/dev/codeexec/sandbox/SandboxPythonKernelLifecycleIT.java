package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.Requirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The life of a python kernel inside the sandbox: a cell past its timeout is interrupted and the kernel keeps its
 * state; a kernel that dies (its process group killed, {@code os._exit}) is reported and the next cell gets a fresh
 * one; a restart keeps the files; limits hold inside cells (memory, processes), each checked in force first with a
 * bounded probe, and the host and the next cell are unharmed; the workspace's removal and the engine's close leave no
 * kernel process.
 */
class SandboxPythonKernelLifecycleIT extends AbstractPythonKernelIT {

    /** The limits of this engine's runs, and so of its kernels: small enough to reach, large enough for ipykernel. */
    static final long MEMORY = 384L << 20;
    static final int PROCESSES = 96;

    @Override
    SandboxEngine.Builder builder() {
        return super.builder().limits(ResourceLimits.builder().memoryBytes(MEMORY).maxProcesses(PROCESSES).build());
    }

    @Test
    void should_interrupt_a_cell_past_its_timeout_and_keep_the_kernel_and_its_state() {
        cell("kept = 'before the loop'");

        CodeExecutionResult r = cell("print('looping', flush=True)\nwhile True:\n    pass", Duration.ofSeconds(3));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.output()).startsWith("looping\n").contains("KeyboardInterrupt");
        CodeExecutionResult after = cell("kept");
        assertThat(after.exitCode()).as(after.output()).isZero();
        assertThat(after.output()).isEqualTo("'before the loop'\n");
    }

    @Test
    void should_report_a_kernel_whose_process_group_was_killed_and_start_a_fresh_one() {
        cell("state = 1");

        CodeExecutionResult r = cell("import os, signal\nos.killpg(0, signal.SIGKILL)");

        assertThat(r.exitCode()).isNotZero();
        assertThat(r.output()).containsIgnoringCase("kernel");
        CodeExecutionResult next = cell("print('state' in dir())");
        assertThat(next.exitCode()).as(next.output()).isZero();
        assertThat(next.output()).endsWith("False\n");
    }

    @Test
    void should_report_a_kernel_that_exits_during_a_cell_and_start_a_fresh_one() {
        cell("state = 1");

        CodeExecutionResult r = cell("import os\nos._exit(3)");

        assertThat(r.exitCode()).isNotZero();
        assertThat(r.output()).containsIgnoringCase("kernel");
        CodeExecutionResult next = cell("print('state' in dir())");
        assertThat(next.output()).endsWith("False\n");
    }

    @Test
    void should_restart_the_kernel_on_request_and_keep_the_files() {
        cell("lost = 1\nopen('kept.txt', 'w').write('file')");

        engine.restartKernel(ws);

        assertThat(cell("print('lost' in dir(), open('kept.txt').read())").output()).isEqualTo("False file\n");
    }

    @Test
    void should_fail_an_allocation_past_the_memory_limit_inside_a_cell_and_keep_the_host_and_the_next_cell() {
        Requirements.require(engine.describe().enforcedLimits().contains(ResourceLimit.MEMORY),
                "control groups that enforce memory limits (run as root, or with a delegated cgroup v2 subtree)");
        // The limit is in force: a run with the engine's limits cannot allocate past it.
        String hog = "b = bytearray(" + (MEMORY * 2) + ")\nb[::4096] = b'x' * len(b[::4096])\nprint('allocated')";
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder(SandboxTesting.PYTHON).args("-c", hog)
                .cwd("work").timeout(Duration.ofSeconds(120)).build()).stdout()).doesNotContain("allocated");
        cell("state = 1");

        CodeExecutionResult r = cell(hog, Duration.ofSeconds(120));

        // Either python's MemoryError inside the kernel, or the kernel killed by the limit and reported dead.
        assertThat(r.output()).doesNotContain("allocated").containsAnyOf("MemoryError", "kernel");
        assertThat(r.exitCode()).isNotZero();
        CodeExecutionResult next = cell("print(6*7)");
        assertThat(next.exitCode()).as(next.output()).isZero();
        assertThat(next.output()).endsWith("42\n");
        // The host is unharmed: it still starts processes and the engine still runs programs.
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("echo").args("ok").build()).stdout())
                .isEqualTo("ok\n");
    }

    @Test
    void should_stop_a_bounded_fork_loop_inside_a_cell_at_the_process_limit() {
        Requirements.require(engine.describe().enforcedLimits().contains(ResourceLimit.PROCESSES),
                "an engine that enforces process limits");
        String forkUpTo = "import os, time\n"
                + "n = 0\n"
                + "try:\n"
                + "    while n < " + (PROCESSES * 3) + ":\n"
                + "        if os.fork() == 0:\n"
                + "            time.sleep(30); os._exit(0)\n"
                + "        n += 1\n"
                + "except OSError as e:\n"
                + "    print('stopped at', n, e.strerror)\n"
                + "else:\n"
                + "    print('forked all', n)\n";
        // The limit is in force: a run with the engine's limits is stopped by it.
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder(SandboxTesting.PYTHON)
                .args("-c", forkUpTo).cwd("work").timeout(Duration.ofSeconds(120)).build()).stdout())
                .contains("stopped at");

        CodeExecutionResult r = cell(forkUpTo, Duration.ofSeconds(120));

        assertThat(r.output()).contains("stopped at");
        int forked = Integer.parseInt(r.output().replaceAll("(?s).*stopped at (\\d+).*", "$1"));
        assertThat(forked).isLessThan(PROCESSES);
        // The children a cell leaves behind count against the kernel's limit until they end: restart to drop them.
        engine.restartKernel(ws);
        assertThat(cell("print(6*7)").output()).isEqualTo("42\n");
    }

    @Test
    void should_leave_no_kernel_process_when_the_workspace_is_removed_and_when_the_engine_closes() throws Exception {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        cell("held = open('kernel-marker', 'w')");
        cell(engine, other, "held = open('kernel-marker', 'w')", Duration.ofSeconds(60));
        List<Long> mine = processesHolding(Path.of(ws.path(), "work", "kernel-marker"));
        List<Long> theirs = processesHolding(Path.of(other.path(), "work", "kernel-marker"));
        assertThat(mine).as("this workspace's kernel").isNotEmpty();
        assertThat(theirs).as("the other workspace's kernel").isNotEmpty();

        engine.manager().cleanup(other);

        assertThat(Files.exists(Path.of(other.path()))).isFalse();
        awaitGone(theirs);
        assertThat(cell("print('still here')").output()).as("the other workspace's kernel went alone")
                .isEqualTo("still here\n");

        engine.close();

        awaitGone(mine);
    }

    /** Host processes with {@code file} open (the kernel whose cell opened it). */
    private static List<Long> processesHolding(Path file) throws Exception {
        List<Long> found = new java.util.ArrayList<>();
        try (java.util.stream.Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try (java.util.stream.Stream<Path> fds = Files.list(p.resolve("fd"))) {
                    if (fds.anyMatch(fd -> {
                        try {
                            return Files.readSymbolicLink(fd).equals(file);
                        } catch (Exception e) {
                            return false;
                        }
                    })) {
                        found.add(Long.parseLong(p.getFileName().toString()));
                    }
                } catch (Exception e) {
                    // gone, or not ours to read
                }
            }
        }
        return found;
    }

    /** Waits (an event, bounded generously) until each process is gone or a zombie. */
    private static void awaitGone(List<Long> pids) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        for (long pid : pids) {
            while (GroupPause.state(pid) != 0 && GroupPause.state(pid) != 'Z' && GroupPause.state(pid) != 'X') {
                assertThat(System.nanoTime()).as("process %d still running", pid).isLessThan(deadline);
                Thread.sleep(20);
            }
        }
    }
}
