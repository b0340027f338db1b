package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Runs bounded by default: a fork bomb, a memory hog and a CPU spinner under the default profile and the default
 * limits are contained (the run ends within its timeout plus a generous bound) while another run keeps working.
 * Every unbounded attack runs only after a bounded probe of the same engine showed that the bound is in force.
 */
class SandboxContainmentIT extends AbstractSandboxIT {

    /** Generous bound on anything that should take seconds: a wait for an event, never a timing assertion. */
    private static final long BOUND_SECONDS = 120;

    @AfterEach
    void restoreCgroups() {
        Cgroups.unavailableForTests = false;
    }

    /** Forks up to {@code n} sleeping children and prints how many it got. Harmless even without any limit. */
    private static String forkUpTo(int n) {
        return "import os, time, sys\n"
                + "n = 0\n"
                + "try:\n"
                + "    while n < " + n + ":\n"
                + "        if os.fork() == 0:\n"
                + "            time.sleep(60); os._exit(0)\n"
                + "        n += 1\n"
                + "except OSError as e:\n"
                + "    print('stopped at', n, e.strerror)\n"
                + "else:\n"
                + "    print('forked all', n)\n";
    }

    private static int forked(RunResult r) {
        return Integer.parseInt(r.stdout().replaceAll("(?s).*(?:stopped at|forked all) (\\d+).*", "$1"));
    }

    private void requireDefault(SandboxEngine e, ResourceLimit limit) {
        Requirements.require(e.describe().enforcedLimits().contains(limit),
                "an engine that enforces " + limit + " (control groups: root or a delegated cgroup v2 subtree)");
    }

    /** Checks the default process bound in force with a bounded probe (a few more children than the bound). */
    private void checkProcessBound(SandboxEngine e, Workspace w) {
        RunResult probe = e.runner().runProgram(w, RunProgramSpec.builder(SandboxTesting.PYTHON)
                .args("-c", forkUpTo(RunLimits.DEFAULT_MAX_PROCESSES + 50)).cwd("work")
                .timeout(Duration.ofSeconds(BOUND_SECONDS)).build());
        assertThat(probe.stdout()).as(probe.stderr()).contains("stopped at");
        assertThat(forked(probe)).isLessThan(RunLimits.DEFAULT_MAX_PROCESSES);
    }

    /** Starts a run in the background; the future completes with its result; {@code started} opens on its output. */
    private CompletableFuture<RunResult> background(SandboxEngine e, Workspace w, String shell, Duration timeout,
                                                    CountDownLatch started) {
        return CompletableFuture.supplyAsync(() -> e.runner().runProgram(w, RunProgramSpec.builder("/bin/sh")
                .args("-c", shell).cwd("work").timeout(timeout).outputListener((stream, chunk) -> {
                    if (stream == StdStream.STDOUT) {
                        started.countDown();
                    }
                }).build()));
    }

    /** Another run, in another workspace, while the attack runs: it must complete normally. */
    private void anotherRunWorks() {
        Workspace other = engine.manager().createWorkspace("bystander", WorkspacePolicy.DEFAULT);
        RunResult r = engine.runner().runProgram(other, RunProgramSpec.builder(SandboxTesting.PYTHON)
                .args("-c", "import subprocess\nprint(sum(subprocess.run(['true']).returncode for _ in range(5)), "
                        + "sum(range(100000)))\n").cwd("work").timeout(Duration.ofSeconds(BOUND_SECONDS)).build());
        assertThat(r.timedOut()).isFalse();
        assertThat(r.stdout()).isEqualTo("0 4999950000\n");
    }

    @Test
    void should_contain_a_fork_bomb_under_the_default_profile_while_other_runs_work() throws Exception {
        requireDefault(engine, ResourceLimit.PROCESSES);
        checkProcessBound(engine, ws);
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<RunResult> bomb = background(engine, ws, "echo started; b() { b | b & }; b; sleep 60",
                Duration.ofSeconds(10), started);
        assertThat(started.await(BOUND_SECONDS, TimeUnit.SECONDS)).as("the bomb started").isTrue();
        anotherRunWorks();
        // The bomb's run ends (its timeout, or its shell giving up) well within the bound.
        bomb.get(BOUND_SECONDS, TimeUnit.SECONDS);
        // Positive control: the same workspace runs normally right after.
        assertThat(python(engine, ws, "print('after')").stdout()).isEqualTo("after\n");
    }

    @Test
    void should_kill_a_memory_hog_under_the_default_profile_while_other_runs_work() throws Exception {
        requireDefault(engine, ResourceLimit.MEMORY);
        // The bound in force: a finite allocation somewhat beyond it is killed.
        long beyond = (RunLimits.DEFAULT_MEMORY_BYTES >> 20) + 512;
        // Near the bound, without swap, the kernel may reclaim a while before it kills: on a loaded machine that takes
        // long, so the probe gets the generous bound, not a run's usual 30 seconds.
        RunResult probe = engine.runner().runProgram(ws, RunProgramSpec.builder(SandboxTesting.PYTHON).args("-c",
                "b = []\n"
                + "for i in range(" + beyond / 64 + "):\n"
                + "    b.append(b'\\xff' * (64 << 20))\n"
                + "print('allocated', len(b) * 64, 'MiB')\n").cwd("work").timeout(Duration.ofSeconds(BOUND_SECONDS))
                .build());
        assertThat(probe.stdout()).doesNotContain("allocated");
        assertThat(probe.exitCode()).as("the bound kills the probe").isEqualTo(137);
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<RunResult> hog = background(engine, ws, "echo started; exec " + SandboxTesting.PYTHON
                + " -c \"b = []\nwhile True: b.append(b'\\xff' * (64 << 20))\"", Duration.ofSeconds(60), started);
        assertThat(started.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
        anotherRunWorks();
        RunResult r = hog.get(BOUND_SECONDS, TimeUnit.SECONDS);
        // Contained either way: killed at the bound, or (a loaded machine reclaiming slowly) stopped at its timeout.
        assertThat(r.exitCode() == 137 || r.timedOut()).as("exit %s, timed out %s", r.exitCode(), r.timedOut())
                .isTrue();
        // Positive control: real work fits in the default bound.
        RunResult fine = engine.runner().runProgram(ws, RunProgramSpec.builder(SandboxTesting.PYTHON).args("-c",
                "b = b'\\xff' * (512 << 20); print('ok', len(b) >> 20)").cwd("work")
                .timeout(Duration.ofSeconds(BOUND_SECONDS)).build());
        assertThat(fine.stdout()).isEqualTo("ok 512\n");
    }

    @Test
    void should_give_a_cpu_spinner_one_share_of_the_cpu_while_other_runs_work() throws Exception {
        Requirements.require(SandboxTesting.isRoot(), "control groups the engine may create (root)");
        String marker = "spin-" + UUID.randomUUID();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<RunResult> spinner = background(engine, ws, "for i in 1 2 3 4 5 6 7 8; do "
                + SandboxTesting.PYTHON + " -c 'while True: pass' " + marker + " & done; echo started; wait",
                Duration.ofSeconds(10), started);
        assertThat(started.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
        // Every spinner is in the run's own cpu group, which competes as one with other runs and the host.
        String group = cpuGroupOf(marker);
        assertThat(group).as("the spinner's cpu group").matches(".*/codeexec-[0-9]+-[0-9]+/run-[0-9]+");
        anotherRunWorks();
        RunResult r = spinner.get(BOUND_SECONDS, TimeUnit.SECONDS);
        assertThat(r.timedOut()).isTrue();
    }

    @Test
    void should_bound_processes_without_control_groups_per_run_through_the_user_namespace() throws Exception {
        Cgroups.unavailableForTests = true;
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root-rlimit")).build()) {
            requireDefault(e, ResourceLimit.PROCESSES);
            assertThat(e.describe().enforcedLimits()).doesNotContain(ResourceLimit.MEMORY);
            Workspace a = e.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
            Workspace b = e.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
            checkProcessBound(e, a);
            // While run a holds its whole allowance, run b (same user on the host) still starts processes: the limit
            // counts each run's own user namespace, not the user.
            CountDownLatch full = new CountDownLatch(1);
            Path release = Path.of(a.path(), "work/release");
            CompletableFuture<RunResult> holder = CompletableFuture.supplyAsync(() -> e.runner().runProgram(a,
                    RunProgramSpec.builder(SandboxTesting.PYTHON).args("-c", forkUpTo(RunLimits.DEFAULT_MAX_PROCESSES
                            + 50) + "sys.stdout.flush()\n"
                            + "while not os.path.exists('release'): time.sleep(0.05)\n").cwd("work")
                            .timeout(Duration.ofSeconds(BOUND_SECONDS)).outputListener((s, c) -> full.countDown())
                            .build()));
            assertThat(full.await(BOUND_SECONDS, TimeUnit.SECONDS)).as("run a holds its allowance").isTrue();
            RunResult other = e.runner().runProgram(b, RunProgramSpec.builder(SandboxTesting.PYTHON)
                    .args("-c", forkUpTo(20)).cwd("work").timeout(Duration.ofSeconds(BOUND_SECONDS)).build());
            Files.writeString(release, "go");
            RunResult held = holder.get(BOUND_SECONDS, TimeUnit.SECONDS);
            assertThat(held.stdout()).contains("stopped at");
            assertThat(forked(held)).isLessThan(RunLimits.DEFAULT_MAX_PROCESSES);
            assertThat(other.stdout()).isEqualTo("forked all 20\n");
        }
    }

    /** The cpu cgroup (v1) or unified cgroup (v2) of the first host process whose command line holds the marker. */
    private static String cpuGroupOf(String marker) throws IOException {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(x -> x.getFileName().toString().chars().allMatch(Character::isDigit))
                    .toList()) {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    if (!cmd.contains(marker)) {
                        continue;
                    }
                    for (String line : Files.readAllLines(p.resolve("cgroup"))) {
                        String[] f = line.split(":", 3);
                        if (f.length == 3 && (java.util.List.of(f[1].split(",")).contains("cpu")
                                || f[0].equals("0") && f[1].isEmpty())) {
                            return f[2];
                        }
                    }
                } catch (IOException ignored) {
                    // Ended while we looked.
                }
            }
        }
        return "none found";
    }
}
