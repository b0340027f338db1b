package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.testing.ExpectedLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs and sessions over the host channel without the local engine's PID-namespace wrapper. */
class ProgramRunsTest {

    private static final Map<String, String> ENV = Map.of("PATH", "/usr/bin:/bin");

    @TempDir
    Path dir;

    private static final ProcessChannel HOST = HostProcessChannel.direct();

    private ProgramLaunch launch(String script, String stdin, Duration timeout) {
        return new ProgramLaunch(List.of("/bin/sh", "-c", script), ENV, dir.toString(), stdin, timeout, 1 << 20, null);
    }

    @Test
    void should_report_exit_code_and_both_streams_when_program_runs() {
        RunResult r = ProgramRuns.run(HOST, launch("cat; echo err >&2; exit 5", "in", Duration.ofSeconds(20)));

        assertThat(r.stdout()).isEqualTo("in");
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(r.exitCode()).isEqualTo(5);
        assertThat(r.timedOut()).isFalse();
    }

    @Test
    void should_return_timed_out_with_partial_output_when_deadline_passes() {
        RunResult r = ProgramRuns.run(HOST, launch("echo partial; sleep 30", null, Duration.ofMillis(300)));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.stdout()).isEqualTo("partial\n");
    }

    @Test
    void should_not_leak_working_directory_when_program_cannot_start() {
        ProgramLaunch missing = new ProgramLaunch(List.of("/nonexistent/prog"), ENV, dir.toString(), null,
                Duration.ofSeconds(5), 1024, null);

        assertThatThrownBy(() -> ProgramRuns.run(HOST, missing)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("/nonexistent/prog").hasMessageNotContaining(dir.toString());
    }

    @Test
    void should_ignore_listener_when_it_threw_once() {
        AtomicInteger calls = new AtomicInteger();
        SafeListener l = new SafeListener((stream, chunk) -> {
            calls.incrementAndGet();
            throw new IllegalStateException("bug");
        });

        try (ExpectedLog log = ExpectedLog.capture()) {
            l.onOutput(StdStream.STDOUT, new byte[] {1}, 0, 1);
            l.onOutput(StdStream.STDERR, new byte[] {2}, 0, 1);
            new SafeListener(null).onOutput(StdStream.STDOUT, new byte[] {1}, 0, 1);

            assertThat(calls).hasValue(1);
            // the application's bug is logged once, with its stack trace
            assertThat(log.text()).containsOnlyOnce("output listener threw")
                    .contains("java.lang.IllegalStateException: bug");
        }
    }

    @Test
    void should_keep_shutdown_output_when_session_is_terminated_with_grace() {
        try (ProgramSession s = ProgramRuns.startSession(HOST, launch("trap 'echo bye; exit 3' TERM; echo up; "
                + "while :; do sleep 0.1; done", null, Duration.ofSeconds(60)), "s1")) {
            ProgramPoll p = s.await(Duration.ofMillis(50), 0, 100);
            for (int i = 0; i < 300 && !p.output().contains("up"); i++) {
                p = s.await(Duration.ofMillis(50), 0, 100);
            }
            assertThat(p.output()).isEqualTo("up\n");

            s.kill(Duration.ofSeconds(10));

            ProgramPoll end = s.poll(0, 100);
            assertThat(end.running()).isFalse();
            assertThat(end.output()).startsWith("up\n").contains("bye\n");
            assertThat(end.exitCode()).isEqualTo(3);
        }
    }
}
