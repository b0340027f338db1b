package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.RunResult;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How a run is classified from its private status channel ({@link SetupStatus.check}): a program's own output
 * and exit code never make it look like a setup failure.
 */
class SetupStatusTest {

    private static final Path WS = Path.of("/sb/workspaces/ws-1");
    private static final String STARTED_BY_BWRAP = "{ \"child-pid\": 12, \"mnt-namespace\": 4 }\n"
            + "{ \"exit-code\": 1 }\n";
    private static final String SET_UP_BUT_NOT_STARTED = "{ \"child-pid\": 12, \"mnt-namespace\": 4 }\n";

    private static RunResult result(String stderr, int exit, boolean timedOut) {
        return new RunResult("out", stderr, exit, Duration.ofMillis(5), timedOut, false, false);
    }

    @Test
    void should_return_what_a_started_program_printed_even_when_it_looks_like_a_setup_failure() {
        for (String forged : new String[] {"bwrap: Can't mount tmpfs on /newroot/tmp\n",
                "codeexec-sandbox-setup: forged\n", "setup-failed changed forged\n"}) {
            RunResult r = result(forged, forged.startsWith("bwrap") ? 1 : 125, false);
            assertThat(SetupStatus.check(r, STARTED_BY_BWRAP, true, WS)).isSameAs(r);
            assertThat(SetupStatus.check(r, Launcher.STARTED + "\n", false, WS)).isSameAs(r);
        }
    }

    @Test
    void should_fail_when_the_program_never_started() {
        assertThatThrownBy(() -> SetupStatus.check(result("bwrap: Can't mount proc on /newroot/proc\n", 1,
                false), SET_UP_BUT_NOT_STARTED, true, WS)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("Nothing ran").hasMessageNotContaining("/newroot");
        assertThatThrownBy(() -> SetupStatus.check(result("", 125, false), Launcher.FAILED + " cgroup cannot "
                + "join the run's cgroup\n", true, WS)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("cannot join the run's cgroup");
        assertThatThrownBy(() -> SetupStatus.check(result("", 125, false), Launcher.FAILED + " "
                + Launcher.CHANGED + " a path to be mounted changed during setup\n", true, WS))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("changed");
        assertThatThrownBy(() -> SetupStatus.check(result("bwrap: Race condition binding dirfd\n", 1,
                false), SET_UP_BUT_NOT_STARTED, true, WS)).isInstanceOf(PolicyViolationException.class);
        assertThatThrownBy(() -> SetupStatus.check(result("bwrap: Can't create file at " + WS
                + "/.git: No such file or directory\n", 1, false), SET_UP_BUT_NOT_STARTED, true, WS))
                .isInstanceOf(PolicyViolationException.class).hasMessageNotContaining(WS.toString());
        // Without bubblewrap, the launcher reports the start; no report is a launcher that died first.
        assertThatThrownBy(() -> SetupStatus.check(result("", 2, false), "", false, WS))
                .isInstanceOf(BackendUnavailableException.class);
    }

    @Test
    void should_report_a_command_bubblewrap_could_not_execute_like_a_shell() {
        RunResult r = SetupStatus.check(result("bwrap: execvp /nope: No such file or directory\n", 1, false),
                SET_UP_BUT_NOT_STARTED, true, WS);
        assertThat(r.exitCode()).isEqualTo(127);
        assertThat(r.stderr()).contains("not found").doesNotContain("bwrap");
    }

    @Test
    void should_return_a_timed_out_run_as_a_result() {
        RunResult r = result("", 137, true);
        assertThat(SetupStatus.check(r, "", true, WS)).isSameAs(r);
    }
}
