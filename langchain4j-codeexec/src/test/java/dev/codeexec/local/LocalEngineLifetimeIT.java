package dev.codeexec.local;

import static dev.codeexec.testing.HostProcesses.awaitLine;
import static dev.codeexec.testing.HostProcesses.holdsFor;
import static dev.codeexec.testing.HostProcesses.killMarked;
import static dev.codeexec.testing.HostProcesses.sleeping;
import static dev.codeexec.testing.HostProcesses.uniqueSleep;
import static dev.codeexec.testing.HostProcesses.waitFor;
import static dev.codeexec.testing.HostProcesses.withMarker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.spi.host.ParentDeath;
import dev.codeexec.testing.EngineChild;
import dev.codeexec.testing.HostProcesses;
import dev.codeexec.testing.Requirements;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing the local engine starts outlives the JVM that started it: a child JVM starts a background session and a
 * run, is killed with SIGKILL (no shutdown hook, no {@code close()}), and both programs must die with it. Without a
 * parent-death signal they would be re-parented to init and sleep on for hours.
 */
class LocalEngineLifetimeIT {

    @TempDir
    Path tmp;

    @Test
    void should_end_runs_and_sessions_when_their_jvm_is_killed() throws Exception {
        Requirements.require(!ParentDeath.wrapper().isEmpty(), "util-linux setpriv with --pdeathsig");
        String session = uniqueSleep();
        String run = uniqueSleep();
        Process child = HostProcesses.startJava(tmp, EngineChild.class, LocalEngine.class.getName(), session, run);
        try {
            awaitLine(child, "ready", Duration.ofSeconds(60));
            // Control: while the JVM lives, both programs run, the session although the thread that started it ended.
            waitFor(() -> sleeping(session) && sleeping(run), "both programs to start",
                    Duration.ofSeconds(30));
            assertThat(holdsFor(() -> sleeping(session) && sleeping(run),
                    Duration.ofSeconds(1))).as("both programs keep running while their JVM lives").isTrue();

            child.destroyForcibly(); // SIGKILL

            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            waitFor(() -> withMarker(session).isEmpty() && withMarker(run).isEmpty(),
                    "the session and the run to die with their JVM", Duration.ofSeconds(30));
        } finally {
            child.destroyForcibly();
            killMarked(session);
            killMarked(run);
        }
    }
}
