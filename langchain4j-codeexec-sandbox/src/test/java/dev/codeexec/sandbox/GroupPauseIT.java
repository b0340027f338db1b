package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * How a workspace's python kernel is kept still while the host works on the workspace: every process of a real
 * sandboxed run (one that keeps forking, and children that keep writing into the workspace) is stopped by a pause,
 * and runs again after the resume: by the cgroup freezer where the host has one, by signals otherwise.
 */
class GroupPauseIT extends AbstractSandboxIT {

    /** Three writers, each rewriting its counter file, and a parent that forks short-lived children all the time. */
    private static final String BUSY = "import os\n"
            + "for i in range(3):\n"
            + "    if os.fork() == 0:\n"
            + "        n = 0\n"
            + "        while True:\n"
            + "            n += 1\n"
            + "            with open('tick%d.tmp' % i, 'w') as f: f.write(str(n))\n"
            + "            os.replace('tick%d.tmp' % i, 'tick%d' % i)\n"
            + "while True:\n"
            + "    pid = os.fork()\n"
            + "    if pid == 0: os._exit(0)\n"
            + "    os.waitpid(pid, 0)\n";

    @Test
    void should_stop_every_process_of_the_run_when_paused_by_signals_and_let_them_run_again_when_resumed()
            throws Exception {
        withBusyRun((run, work) -> {
            GroupPause pause = GroupPause.ofJoinFile(run.group().procsFiles().get(0));

            pause.pause();

            List<Long> members = pause.members();
            assertThat(members).as("the run's processes").hasSizeGreaterThanOrEqualTo(4);
            for (long pid : members) {
                assertThat(GroupPause.state(pid)).as("process %d", pid).isIn('T', 't', 'Z', 'X', (char) 0);
            }
            assertStill(work, pause::members);
            pause.resume();
            assertWritingAgain(work);

            // The fallback of a pause that cannot be confirmed: every process killed.
            pause.killAll();
            assertThat(pause.members().stream().allMatch(pid -> "ZX\0".indexOf(GroupPause.state(pid)) >= 0))
                    .isTrue();
        });
    }

    @Test
    void should_freeze_every_process_of_the_run_and_thaw_them_when_the_host_has_a_freezer() throws Exception {
        withBusyRun((run, work) -> {
            GroupFreezer freezer = GroupFreezer.forRun(run.group().procsFiles());
            Requirements.require(freezer != null, "a cgroup freezer (cgroup v2, or the v1 freezer hierarchy)");
            Path runProcs = Path.of(run.group().procsFiles().get(0)).resolveSibling("cgroup.procs");
            try {
                for (int i = 0; i < 3; i++) {
                    freezer.pause();

                    List<Long> members = GroupFreezer.pids(runProcs);
                    assertThat(members).as("the run's processes").hasSizeGreaterThanOrEqualTo(4);
                    assertThat(GroupFreezer.pids(freezer.frozenGroup().resolve("cgroup.procs")))
                            .as("every process of the run is in the frozen group").containsAll(members);
                    assertStill(work, () -> {
                        try {
                            return GroupFreezer.pids(runProcs);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    freezer.resume();
                    assertWritingAgain(work);
                }
                freezer.killAll();
                assertThat(GroupFreezer.pids(runProcs).stream()
                        .allMatch(pid -> "ZX\0".indexOf(GroupPause.state(pid)) >= 0)).isTrue();
            } finally {
                freezer.close();
            }
        });
    }

    private interface BusyTest {
        void run(SandboxRun run, Path work) throws Exception;
    }

    /** Starts {@link #BUSY} as a sandboxed run of the engine, waits for its writers, runs the test, ends the run. */
    private void withBusyRun(BusyTest test) throws Exception {
        SandboxRun run = (SandboxRun) engine.prepare(ws, RunProgramSpec.builder(SandboxTesting.PYTHON)
                .args("-c", BUSY).cwd("work").timeout(Duration.ofSeconds(300)).build());
        Requirements.require(run.group() != null, "control groups (the run of a python kernel is paused through them)");
        ChannelProcess p = run.channel().start(run.launch(), (stream, bytes, offset, length) -> { });
        try {
            Path work = Path.of(ws.path(), "work");
            waitFor(() -> ticks(work).size() == 3, "the three writers to start");
            test.run(run, work);
        } finally {
            p.killTree();
            p.exit().get(60, TimeUnit.SECONDS);
            run.release();
        }
    }

    /** Nothing is written and no process is born while paused (however long we look: a longer look only costs time). */
    private static void assertStill(Path work, java.util.function.Supplier<List<Long>> members) throws Exception {
        List<Long> before = members.get();
        Map<String, String> paused = ticks(work);
        Thread.sleep(200);
        assertThat(ticks(work)).isEqualTo(paused);
        assertThat(members.get()).as("no process was born while paused").isEqualTo(before);
    }

    /** Positive control: resumed, every writer writes again. */
    private static void assertWritingAgain(Path work) throws InterruptedException {
        Map<String, String> before = ticks(work);
        waitFor(() -> ticks(work).entrySet().stream().allMatch(e -> !e.getValue().equals(before.get(e.getKey()))),
                "every writer to write again");
    }

    /** The writers' counters now: file name to value (a writer between open and write leaves an empty file). */
    private static Map<String, String> ticks(Path work) {
        Map<String, String> ticks = new TreeMap<>();
        for (int i = 0; i < 3; i++) {
            try {
                ticks.put("tick" + i, Files.readString(work.resolve("tick" + i)));
            } catch (IOException e) {
                // not written yet
            }
        }
        return ticks;
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
