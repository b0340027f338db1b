package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.HostProcesses;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resource exhaustion and leftovers: fork bombs, memory hogs, CPU burners, huge files, descriptor leaks, and a
 * background child trying to outlive its run's timeout. Each limit is paired with a run that stays within it.
 */
class SandboxLimitsIT extends AbstractSandboxIT {


    private RunResult run(String code, ResourceLimits limits, Duration timeout) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder(SandboxTesting.PYTHON).args("-c", code)
                .cwd("work").limits(limits).timeout(timeout).build());
    }

    @Test
    void should_hold_fork_bomb_at_process_limit() {
        requireLimit(ResourceLimit.PROCESSES);
        ResourceLimits limits = ResourceLimits.builder().maxProcesses(32).build();
        RunResult bomb = run("import os, time\n"
                + "n = 0\n"
                + "try:\n"
                + "    while n < 10000:\n"
                + "        if os.fork() == 0:\n"
                + "            time.sleep(30); os._exit(0)\n"
                + "        n += 1\n"
                + "except OSError as e:\n"
                + "    print('stopped at', n, e.strerror)\n", limits, Duration.ofSeconds(20));
        assertThat(bomb.stdout()).contains("stopped at").contains("Resource temporarily unavailable");
        int forked = Integer.parseInt(bomb.stdout().replaceAll("(?s).*stopped at (\\d+).*", "$1"));
        assertThat(forked).isLessThan(32);
        // Control: a run with a few children under the same limit works, and the host can still start processes.
        RunResult fine = run("import subprocess\n"
                + "print(sum(subprocess.run(['true']).returncode for _ in range(10)))\n", limits,
                Duration.ofSeconds(20));
        assertThat(fine.stdout().strip()).isEqualTo("0");
    }

    @Test
    void should_kill_memory_hog_at_memory_limit() {
        requireLimit(ResourceLimit.MEMORY);
        ResourceLimits limits = ResourceLimits.builder().memoryBytes(128L << 20).build();
        RunResult hog = run("b = []\n"
                + "for i in range(64):\n"
                + "    b.append(bytearray(32 << 20))\n"
                + "print('allocated 2 GiB')\n", limits, Duration.ofSeconds(30));
        assertThat(hog.stdout()).doesNotContain("allocated");
        assertThat(hog.exitCode()).isIn(137, 1);
        RunResult fine = run("b = bytearray(32 << 20); print('ok', len(b))\n", limits, Duration.ofSeconds(30));
        assertThat(fine.stdout()).contains("ok 33554432");
    }

    @Test
    void should_stop_cpu_burner_at_cpu_limit() {
        ResourceLimits limits = ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build();
        RunResult burn = run("while True: pass\n", limits, Duration.ofSeconds(30));
        assertThat(burn.timedOut()).isFalse();
        assertThat(burn.exitCode()).isIn(128 + 24, 128 + 9); // SIGXCPU, or SIGKILL at the hard limit
        RunResult fine = run("print(sum(range(1000)))\n", limits, Duration.ofSeconds(30));
        assertThat(fine.stdout().strip()).isEqualTo("499500");
    }

    @Test
    void should_refuse_file_beyond_file_size_limit() {
        ResourceLimits limits = ResourceLimits.builder().maxFileBytes(1 << 20).build();
        RunResult big = run("import signal\n"
                + "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                + "try:\n"
                + "    open('big.bin', 'wb').write(b'x' * (4 << 20))\n"
                + "    print('wrote')\n"
                + "except OSError as e:\n"
                + "    print('refused', e.strerror)\n", limits, Duration.ofSeconds(30));
        assertThat(big.stdout()).contains("refused File too large");
        RunResult fine = run("open('small.bin', 'wb').write(b'x' * (512 << 10)); print('ok')\n", limits,
                Duration.ofSeconds(30));
        assertThat(fine.stdout()).contains("ok");
    }

    @Test
    void should_refuse_descriptors_beyond_open_files_limit() {
        ResourceLimits limits = ResourceLimits.builder().maxOpenFiles(32).build();
        RunResult leak = run("fs = []\n"
                + "try:\n"
                + "    for i in range(100): fs.append(open('/dev/null'))\n"
                + "except OSError as e:\n"
                + "    print('stopped at', len(fs), e.strerror)\n", limits, Duration.ofSeconds(30));
        assertThat(leak.stdout()).contains("Too many open files");
        RunResult fine = run("fs = [open('/dev/null') for i in range(10)]; print('ok', len(fs))\n", limits,
                Duration.ofSeconds(30));
        assertThat(fine.stdout()).contains("ok 10");
        assertThatThrownBy(() -> run("pass", ResourceLimits.builder().maxOpenFiles(3).build(), Duration.ofSeconds(5)))
                .hasMessageContaining("maxOpenFiles");
    }

    @Test
    void should_leave_no_background_child_and_no_cgroup_after_timeout() throws IOException {
        requireLimit(ResourceLimit.PROCESSES);
        String marker = "" + (1000 + Math.abs(UUID.randomUUID().getMostSignificantBits() % 100000)) + ".5";
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c",
                "setsid sleep " + marker + " & nohup sleep " + marker + " >/dev/null 2>&1 & "
                        + "(sleep " + marker + " &); echo started; sleep " + marker)
                .limits(ResourceLimits.builder().maxProcesses(64).build()).timeout(Duration.ofSeconds(1)).build());
        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).contains("started");
        assertThat(HostProcesses.withMarker(marker)).isEmpty();
        // Control: the engine keeps working after the kill.
        assertThat(python(engine, ws, "print('next')").stdout()).isEqualTo("next\n");
    }

    @Test
    void should_refuse_unenforceable_limit_instead_of_ignoring_it() {
        for (ResourceLimit l : ResourceLimit.values()) {
            if (!engine.describe().enforcedLimits().contains(l)) {
                ResourceLimits limits = l == ResourceLimit.MEMORY
                        ? ResourceLimits.builder().memoryBytes(64L << 20).build()
                        : ResourceLimits.builder().maxProcesses(8).build();
                assertThatThrownBy(() -> run("pass", limits, Duration.ofSeconds(5)))
                        .isInstanceOf(UnsupportedCapabilityException.class);
            }
        }
        assertThat(engine.describe().enforcedLimits()).contains(ResourceLimit.CPU_TIME, ResourceLimit.FILE_SIZE,
                ResourceLimit.OPEN_FILES);
    }

    private void requireLimit(ResourceLimit limit) {
        Requirements.require(engine.describe().enforcedLimits().contains(limit),
                "control groups that enforce " + limit + " (run as root, or with a delegated cgroup v2 subtree)");
    }
}
