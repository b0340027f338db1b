package dev.codeexec.spi.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramRuns;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's first process forked by a thread that joined the run's groups for the fork (cgroup v1): the process is
 * counted and limited from its start (a bounded fork bomb stops at the limit, checked to hold first), a program that
 * stays within the limit gets all of it (the thread is not counted once it has gone), and the thread always goes
 * back: after a failed fork, after a failed join, with several launches at once, and with a thread it started
 * while inside.
 */
class ThreadJoinIT {

    private static final String PYTHON = "/usr/bin/python3";

    /** The run's pids group, as it sees it. */
    private static final String OWN_GROUP = "import re\n"
            + "g = '/sys/fs/cgroup/pids' + re.search(r'^\\d+:pids:(.*)$', open('/proc/self/cgroup').read(), re.M)"
            + ".group(1)\n";

    /** Waits (bounded) until the run is alone in its group, then forks sleeping children until refused (≤ 200). */
    private static final String FORK_UNTIL_REFUSED = OWN_GROUP
            + "import os, time\n"
            + "for _ in range(1000):\n"
            + "    if open(g + '/tasks').read().split() == [str(os.getpid())]:\n"
            + "        break\n"
            + "    time.sleep(0.01)\n"
            + "else:\n"
            + "    print('not alone'); raise SystemExit(3)\n"
            + "def child():\n"
            + "    if os.fork() == 0:\n"
            + "        os.close(1); os.close(2); time.sleep(30); os._exit(0)\n"
            + "n = 0\n"
            + "while n < 200:\n"
            + "    try:\n"
            + "        child()\n"
            + "    except OSError as e:\n"
            + "        print('stopped at', n, e.strerror); break\n"
            + "    n += 1\n"
            + "else:\n"
            + "    print('not stopped')\n";

    @TempDir
    Path tmp;

    private Cgroups cgroups;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void setUp() {
        Requirements.require(Files.isExecutable(Path.of(PYTHON)), "the system python at " + PYTHON);
        cgroups = Cgroups.detect();
        Requirements.require(cgroups.pids(), "a pids controller the JVM may use (root)");
    }

    @AfterEach
    void tearDown() {
        started.forEach(p -> p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly));
        started.forEach(Process::destroyForcibly);
        if (cgroups != null) {
            cgroups.close();
        }
    }

    private Cgroups.RunGroup group(int maxPids) throws IOException {
        Cgroups.RunGroup g = cgroups.open(null, maxPids);
        Requirements.require(g.spawnsFromThread(), "cgroup v1 hierarchies, where a thread can join a group alone");
        return g;
    }

    private Process python(String code) {
        try {
            Process p = new ProcessBuilder(PYTHON, "-c", code).redirectErrorStream(true).start();
            started.add(p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String output(Process p) throws Exception {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    private static int stoppedAt(String out) {
        assertThat(out).contains("stopped at").contains("Resource temporarily unavailable");
        return Integer.parseInt(out.replaceAll("(?s).*stopped at (\\d+).*", "$1"));
    }

    private static String ownGroups() throws IOException {
        return Files.readString(Path.of("/proc/thread-self/cgroup"));
    }

    /** The threads of this JVM in the group's {@code tasks}. */
    private static List<String> jvmThreadsIn(Path tasks) throws IOException {
        return Files.readAllLines(tasks).stream().map(String::strip)
                .filter(t -> !t.isEmpty() && Files.exists(Path.of("/proc/self/task", t))).toList();
    }

    private static Path tasksOf(Process p) throws IOException {
        String line = Files.readAllLines(Path.of("/proc/" + p.pid() + "/cgroup")).stream()
                .filter(l -> l.matches("\\d+:pids:.*")).findFirst().orElseThrow();
        return Path.of("/sys/fs/cgroup/pids" + line.substring(line.indexOf(":pids:") + 6), "tasks");
    }

    @Test
    void should_hold_a_fork_bomb_forked_into_its_group_at_the_limit() throws Exception {
        Cgroups.RunGroup g = group(24);

        String out = output(g.spawn(() -> python(FORK_UNTIL_REFUSED)));

        // The bomb itself is one of the 24: it got 23 children, not one more (nor one less).
        assertThat(stoppedAt(out)).isEqualTo(23);
        g.close();
    }

    @Test
    void should_run_without_a_limit_when_forked_outside_the_group() throws Exception {
        // Control of the test above: the same program, forked by a thread that joined nothing, is not stopped.
        String out = output(python(FORK_UNTIL_REFUSED.replace("if open(g + '/tasks')", "if True or open(g)")
                .replace("while n < 200", "while n < 40")));

        assertThat(out).contains("not stopped");
    }

    @Test
    void should_put_the_thread_back_when_the_fork_fails() throws Exception {
        Cgroups.RunGroup g = group(64);
        String before = ownGroups();

        assertThatThrownBy(() -> g.spawn(() -> {
            throw new UncheckedIOException(new IOException("no such program"));
        })).isInstanceOf(UncheckedIOException.class);

        assertThat(ownGroups()).isEqualTo(before);
        g.close();
    }

    @Test
    void should_refuse_the_launch_and_stay_home_when_a_group_cannot_be_joined() throws Exception {
        Cgroups.RunGroup g = group(64);
        g.remove(); // the groups are gone: joining them fails
        String before = ownGroups();
        List<String> forked = new ArrayList<>();

        assertThatThrownBy(() -> g.spawn(() -> {
            forked.add("forked");
            return python("pass");
        })).isInstanceOf(BackendUnavailableException.class).hasMessageContaining("nothing was run");

        assertThat(forked).isEmpty();
        assertThat(ownGroups()).isEqualTo(before);
    }

    @Test
    void should_move_a_thread_started_inside_back_out_of_the_group() throws Exception {
        Cgroups.RunGroup g = group(64);
        Thread[] parked = new Thread[1];

        Process p = g.spawn(() -> {
            parked[0] = new Thread(LockSupport::park, "born-inside");
            parked[0].setDaemon(true);
            parked[0].start();
            return python("import time; time.sleep(30)");
        });

        try {
            assertThat(jvmThreadsIn(tasksOf(p))).isEmpty();
            assertThat(Files.readAllLines(tasksOf(p)).stream().map(String::strip).toList())
                    .containsExactly(Long.toString(p.pid()));
        } finally {
            LockSupport.unpark(parked[0]);
            p.destroyForcibly().waitFor();
            g.close();
        }
    }

    @Test
    void should_put_each_of_concurrent_launches_in_its_own_group() throws Exception {
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Cgroups.RunGroup> groups = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                groups.add(group(32 + i));
            }
            List<Future<String>> seen = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Cgroups.RunGroup g = groups.get(i);
                seen.add(pool.submit((Callable<String>) () -> {
                    String before = ownGroups();
                    Process p = g.spawn(() -> python(OWN_GROUP + "print(open(g + '/pids.max').read().strip())"));
                    assertThat(ownGroups()).isEqualTo(before);
                    return output(p).strip();
                }));
            }
            for (int i = 0; i < n; i++) {
                assertThat(seen.get(i).get(60, TimeUnit.SECONDS)).isEqualTo(Integer.toString(32 + i));
            }
            groups.forEach(Cgroups.RunGroup::close);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void should_plan_host_runs_without_a_launching_shell_unless_the_process_limit_is_small() throws Exception {
        HostRuns runs = new HostRuns(new LauncherThreads("test-launcher-", LauncherThreads.DEFAULT_KEEP_ALIVE),
                cgroups);
        Files.createDirectories(tmp.resolve("ws"));
        PathResolver resolver = new PathResolver(tmp.resolve("ws"));
        RunEnvironment env = RunEnvironment.of(ShellEnvironmentPolicy.inheritAll(), System.getenv());
        RunProgramSpec spec = RunProgramSpec.builder(PYTHON).args("-c", OWN_GROUP
                + "print(open(g + '/pids.max').read().strip())").build();
        Requirements.require(cgroups.open(null, 64).spawnsFromThread(), "cgroup v1 hierarchies");

        PreparedRun direct = runs.plan(resolver, spec, env, 4096,
                ResourceLimits.builder().maxProcesses(64).build());
        PreparedRun small = runs.plan(resolver, spec, env, 4096,
                ResourceLimits.builder().maxProcesses(ThreadJoin.MIN_PROCESSES - 1).build());
        RunResult inGroup;
        RunResult throughShell;
        try {
            assertThat(direct.launch().argv()).doesNotContain("/bin/sh");
            assertThat(small.launch().argv()).contains("/bin/sh");
            inGroup = direct.check(ProgramRuns.run(direct.channel(), direct.launch()));
            throughShell = small.check(ProgramRuns.run(small.channel(), small.launch()));
        } finally {
            direct.release();
            small.release();
        }

        assertThat(inGroup.stdout().strip()).isEqualTo("64");
        assertThat(throughShell.stdout().strip()).isEqualTo(Integer.toString(ThreadJoin.MIN_PROCESSES - 1));
    }
}
