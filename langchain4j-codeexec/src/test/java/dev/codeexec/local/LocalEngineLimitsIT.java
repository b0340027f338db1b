package dev.codeexec.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.testing.Requirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local engine's process bound: a fork bomb stops at the bound (checked to be enforced before the bomb is
 * started, and the bomb is bounded itself, so that an unbounded one never runs), a program that starts a few
 * processes still works, and the bound is there by default. Hosts without control groups get no bound and say so.
 */
class LocalEngineLimitsIT {

    private static final String PYTHON = "/usr/bin/python3";

    /** At most 2,000 children, each exiting after 30 s: bounded even where no limit holds it. */
    private static final String BOMB = "import os, time\n"
            + "n = 0\n"
            + "try:\n"
            + "    while n < 2000:\n"
            + "        if os.fork() == 0:\n"
            + "            time.sleep(30); os._exit(0)\n"
            + "        n += 1\n"
            + "    print('not stopped')\n"
            + "except OSError as e:\n"
            + "    print('stopped at', n, e.strerror)\n";

    @TempDir
    Path tmp;

    LocalEngine engine;

    @AfterEach
    void tearDown() {
        Cgroups.unavailableForTests = false;
        if (engine != null) {
            engine.close();
        }
    }

    private Workspace open(LocalEngine.Builder b) {
        engine = b.baseDir(tmp.resolve("base")).build();
        return engine.manager().createWorkspace("limits", WorkspacePolicy.DEFAULT);
    }

    private RunResult python(Workspace ws, String code, ResourceLimits limits) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder(PYTHON).args("-c", code).limits(limits)
                .timeout(Duration.ofSeconds(60)).build());
    }

    private void requireProcessBound() {
        Requirements.require(Files.isExecutable(Path.of(PYTHON)), "the system python at " + PYTHON);
        Requirements.require(engine.describe().enforcedLimits().contains(ResourceLimit.PROCESSES),
                "control groups the JVM may create, for the local engine's process bound (run as root, or with a "
                        + "delegated cgroup v2 subtree)");
    }

    @Test
    void should_hold_a_fork_bomb_at_the_process_limit() {
        Workspace ws = open(LocalEngine.builder());
        requireProcessBound();
        ResourceLimits limits = ResourceLimits.builder().maxProcesses(32).build();

        RunResult bomb = python(ws, BOMB, limits);

        assertThat(bomb.stdout()).contains("stopped at").contains("Resource temporarily unavailable");
        int forked = Integer.parseInt(bomb.stdout().replaceAll("(?s).*stopped at (\\d+).*", "$1"));
        assertThat(forked).isLessThan(32);
        // Control: under the same limit, a program that starts a few processes works.
        RunResult fine = python(ws, "import subprocess\n"
                + "print(sum(subprocess.run(['true']).returncode for _ in range(10)))\n", limits);
        assertThat(fine.stdout().strip()).isEqualTo("0");
        RunResult parallel = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                "for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait; echo all done").limits(limits)
                .timeout(Duration.ofSeconds(60)).build());
        assertThat(parallel.stdout()).isEqualTo("all done\n");
    }

    @Test
    void should_bound_processes_by_default_and_not_when_turned_off() {
        Workspace ws = open(LocalEngine.builder());
        requireProcessBound();
        String ownLimit = "import re\n"
                + "path = re.search(r'^\\d+:pids:(.*)$', open('/proc/self/cgroup').read(), re.M).group(1)\n"
                + "try:\n"
                + "    print(open('/sys/fs/cgroup/pids' + path + '/pids.max').read().strip())\n"
                + "except OSError:\n"
                + "    print('none')\n";

        RunResult defaults = python(ws, ownLimit, null);

        assertThat(defaults.stdout().strip()).isEqualTo(Integer.toString(LocalEngine.DEFAULT_MAX_PROCESSES));
        engine.close();
        Workspace unbounded = open(LocalEngine.builder().limits(ResourceLimits.NONE));
        assertThat(python(unbounded, ownLimit, null).stdout().strip()).isIn("none", "max");
    }

    @Test
    void should_kill_a_memory_hog_at_the_memory_limit() {
        Workspace ws = open(LocalEngine.builder());
        Requirements.require(engine.describe().enforcedLimits().contains(ResourceLimit.MEMORY),
                "control groups the JVM may create, for memory limits");
        ResourceLimits limits = ResourceLimits.builder().memoryBytes(128L << 20).build();

        RunResult hog = python(ws, "b = []\n"
                + "for i in range(64):\n"
                + "    b.append(bytearray(32 << 20))\n"
                + "print('allocated 2 GiB')\n", limits);

        assertThat(hog.stdout()).doesNotContain("allocated");
        assertThat(hog.exitCode()).isIn(137, 1);
        RunResult fine = python(ws, "b = bytearray(32 << 20); print('ok', len(b))\n", limits);
        assertThat(fine.stdout()).contains("ok 33554432");
    }

    @Test
    void should_refuse_a_process_limit_on_a_host_without_control_groups() {
        Cgroups.unavailableForTests = true;
        Workspace ws = open(LocalEngine.builder());

        assertThat(engine.describe().enforcedLimits()).doesNotContain(ResourceLimit.PROCESSES, ResourceLimit.MEMORY);
        assertThatThrownBy(() -> python(ws, "pass", ResourceLimits.builder().maxProcesses(8).build()))
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("PROCESSES");
        // Control: without a limit asked for, runs work (unbounded, as the engine said at build time).
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("echo").args("ran").build()).stdout())
                .isEqualTo("ran\n");
        engine.close();
        engine = null;
        assertThatThrownBy(() -> LocalEngine.builder().baseDir(tmp.resolve("other"))
                .limits(ResourceLimits.builder().maxProcesses(8).build()).build())
                .isInstanceOf(UnsupportedCapabilityException.class);
    }

    @Test
    void should_refuse_limits_the_local_engine_never_enforces() {
        Workspace ws = open(LocalEngine.builder());

        assertThatThrownBy(() -> python(ws, "pass", ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build()))
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("CPU_TIME");
    }
}
