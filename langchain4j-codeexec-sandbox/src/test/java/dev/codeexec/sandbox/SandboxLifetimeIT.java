package dev.codeexec.sandbox;

import static dev.codeexec.testing.HostProcesses.awaitLine;
import static dev.codeexec.testing.HostProcesses.holdsFor;
import static dev.codeexec.testing.HostProcesses.killMarked;
import static dev.codeexec.testing.HostProcesses.sleeping;
import static dev.codeexec.testing.HostProcesses.uniqueSleep;
import static dev.codeexec.testing.HostProcesses.waitFor;
import static dev.codeexec.testing.HostProcesses.withMarker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.EngineChild;
import dev.codeexec.testing.HostProcesses;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the sandbox starts lives no longer than its owner: the JVM (bubblewrap's {@code --die-with-parent}), and the
 * launcher thread that forked it, which therefore stays as long as its sandboxes run while idle launcher threads
 * expire after a burst.
 */
class SandboxLifetimeIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration KEEP_ALIVE = Duration.ofMillis(200);

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @Test
    void should_end_runs_and_sessions_when_their_jvm_is_killed() throws Exception {
        String session = uniqueSleep();
        String run = uniqueSleep();
        Process child = HostProcesses.startJava(tmp, EngineChild.class, SandboxEngine.class.getName(), session, run);
        try {
            awaitLine(child, "ready", WAIT);
            // Control: while the JVM lives, both sandboxes run, the session although the thread that started it ended.
            waitFor(() -> sleeping(session) && sleeping(run), "both programs to start",
                    WAIT);
            assertThat(holdsFor(() -> sleeping(session) && sleeping(run),
                    Duration.ofSeconds(1))).as("both programs keep running while their JVM lives").isTrue();

            child.destroyForcibly(); // SIGKILL

            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            waitFor(() -> withMarker(session).isEmpty() && withMarker(run).isEmpty(),
                    "the session and the run to die with their JVM", WAIT);
            // The dead engine's workspace volumes (where there is a disk quota) are unmounted by the next engine.
            SandboxEngine.builder().rootDir(tmp.resolve("next")).build().close();
            assertThat(SandboxTesting.mountsUnder(tmp.toRealPath())).as("mounts the dead engine left").isEmpty();
        } finally {
            child.destroyForcibly();
            killMarked(session);
            killMarked(run);
        }
    }

    @Test
    void should_let_idle_launcher_threads_expire_while_a_running_session_keeps_its_own() throws Exception {
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("root")).launcherKeepAlive(KEEP_ALIVE)
                .build()) {
            Workspace home = engine.manager().createWorkspace("session", WorkspacePolicy.DEFAULT);
            ProgramSession cat = engine.interactive().orElseThrow().startProgram(home,
                    RunProgramSpec.builder("cat").timeout(Duration.ofMinutes(5)).build());

            int conversations = 16;
            List<Workspace> spaces = new ArrayList<>();
            for (int i = 0; i < conversations; i++) {
                spaces.add(engine.manager().createWorkspace("burst-" + i, WorkspacePolicy.DEFAULT));
            }
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService callers = Executors.newFixedThreadPool(conversations);
            List<CompletableFuture<RunResult>> runs = new ArrayList<>();
            for (Workspace w : spaces) {
                runs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return engine.runner().runProgram(w, RunProgramSpec.builder("true").build());
                }, callers));
            }
            go.countDown();
            for (CompletableFuture<RunResult> r : runs) {
                assertThat(r.get(WAIT.toSeconds(), TimeUnit.SECONDS).exitCode()).isZero();
            }
            callers.shutdown();

            waitFor(() -> engine.launcherThreadCount() == 1, "the idle launcher threads to expire", WAIT);
            // Many keep-alives later the session's own launcher thread is still there, and the session answers.
            assertThat(holdsFor(() -> cat.exitCode().isEmpty() && engine.launcherThreadCount() == 1,
                    KEEP_ALIVE.multipliedBy(10))).isTrue();
            cat.write("still here", true);
            waitFor(() -> cat.poll(0, 100).output().contains("still here"), "the session to echo", WAIT);

            cat.close();
            waitFor(() -> engine.launcherThreadCount() == 0, "the session's launcher thread to expire", WAIT);
        }
    }
}
