package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.spi.host.HostProcessChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes to a session's stdin are bounded: a program that does not read fails the write after the write wait, a
 * write stuck on a full pipe never holds up kill or closeStdin, and a program that reads gets everything.
 */
class ChannelSessionTest {

    private static final Map<String, String> ENV = Map.of("PATH", "/usr/bin:/bin");
    /** Far beyond any pipe buffer (64 KiB on Linux, 16 KiB on macOS). */
    private static final String MEGABYTE = "x".repeat(1 << 20);
    /** Liveness bounds, far below the sessions' life of 120 s that ended a stuck write before the fix. */
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private ChannelSession start(String script, String stdin, Duration writeWait) {
        ProgramLaunch launch = new ProgramLaunch(List.of("/bin/sh", "-c", script), ENV, dir.toString(), stdin,
                Duration.ofSeconds(120), 1 << 20, null);
        return new ChannelSession("internal-id-42", HostProcessChannel.direct(), launch, writeWait);
    }

    @Test
    void should_hold_only_what_its_output_needs_before_and_after_the_program_exits() throws Exception {
        try (ChannelSession s = start("read line; echo \"got $line\"", null, Duration.ofSeconds(5))) {
            assertThat(s.logBufferBytes()).as("while running, before any output").isLessThanOrEqualTo(SessionLog.INITIAL);
            s.write("it", true);
            ProgramPoll p = s.await(BOUND, 0, 1000);
            assertThat(p.output()).isEqualTo("got it\n");
            assertThat(p.running()).isFalse();

            long deadline = System.nanoTime() + BOUND.toNanos();
            while (s.logBufferBytes() > 7 && System.nanoTime() < deadline) {
                Thread.sleep(10); // the trim follows the end of the output
            }
            assertThat(s.logBufferBytes()).as("after the output ended").isEqualTo(7);
            assertThat(s.poll(0, 1000).output()).isEqualTo("got it\n");
        }
    }

    @Test
    void should_fail_the_write_and_name_no_session_when_the_program_does_not_read() {
        try (ChannelSession s = start("sleep 120", null, Duration.ofMillis(500))) {
            assertTimeoutPreemptively(BOUND, () -> assertThatThrownBy(() -> s.write(MEGABYTE, false))
                    .isInstanceOf(InvalidSpecException.class)
                    .hasMessageStartingWith("the program is not reading its standard input: it took ")
                    .hasMessageContaining("of 1048576 bytes within 500 ms")
                    .hasMessageNotContaining("internal-id-42"));
            // A later write waits for the abandoned one as long as it may, then says why nothing was written.
            assertTimeoutPreemptively(BOUND, () -> assertThatThrownBy(() -> s.write("more", true))
                    .hasMessageContaining("earlier input is still waiting to be read"));

            assertTimeoutPreemptively(BOUND, () -> s.kill(Duration.ofMillis(200)));
            assertThat(s.exitCode()).isPresent();
            assertThatThrownBy(() -> s.write("late", true)).hasMessageContaining("exited")
                    .hasMessageNotContaining("internal-id-42");
        }
    }

    @Test
    void should_not_let_an_unread_initial_stdin_block_a_later_write() {
        try (ChannelSession s = start("sleep 120", MEGABYTE, Duration.ofMillis(500))) {
            assertTimeoutPreemptively(BOUND, () -> assertThatThrownBy(() -> s.write("x", true))
                    .hasMessageContaining("not reading its standard input"));
        }
    }

    @Test
    void should_kill_and_close_stdin_at_once_when_a_write_is_stuck_on_a_full_pipe() throws Exception {
        try (ChannelSession s = start("sleep 120", null, Duration.ofSeconds(100))) {
            // A writer that would wait long: kill and closeStdin must not wait for it.
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> s.write(MEGABYTE, false));
            assertThat(writer).isNotDone();

            assertTimeoutPreemptively(BOUND, s::closeStdin);
            assertTimeoutPreemptively(BOUND, () -> s.kill(Duration.ofMillis(200)));

            // The broken pipe ends the write with a clear message; if the writer thread only got going after
            // closeStdin, it is refused as writing to a closed input, which is as clear.
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> writer.get(BOUND.toSeconds(), TimeUnit.SECONDS));
            assertThat(e.getCause()).isInstanceOf(InvalidSpecException.class)
                    .hasMessageMatching("(?s).*(stopped reading its standard input|standard input was closed).*");
            assertThat(s.exitCode()).isPresent();
        }
    }

    @Test
    void should_deliver_all_input_in_order_when_the_program_reads() {
        try (ChannelSession s = start("wc -c", "abc", Duration.ofSeconds(30))) {
            assertTimeoutPreemptively(BOUND, () -> {
                s.write(MEGABYTE, false);
                s.write("", true);
                s.closeStdin();
            });
            assertThatThrownBy(() -> s.write("after close", true)).hasMessageContaining("was closed");

            ProgramPoll p = s.await(BOUND, 0, 100);
            assertThat(p.running()).isFalse();
            assertThat(p.output().strip()).isEqualTo(String.valueOf(3 + (1 << 20) + 1));
            assertThat(p.exitCode()).isZero();
        }
    }
}
