package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The core's rules over any channel, shown with a scripted channel that has no process behind it: what a remote
 * backend (a Docker exec, an E2B process stream) gets from {@link ProgramRuns} without writing any of it.
 */
class ProgramRunsRulesTest {

    /** The bound of a wait for an event (the process-channel contract's, which lives in the TCK module). */
    private static final Duration BOUND = Duration.ofSeconds(60);

    /** A channel whose program does what the test script says, on the test's thread. */
    private static final class ScriptedChannel implements ProcessChannel {
        final List<ScriptedProcess> started = Collections.synchronizedList(new ArrayList<>());
        private final java.util.function.BiConsumer<ScriptedProcess, OutputSink> onStart;

        ScriptedChannel(java.util.function.BiConsumer<ScriptedProcess, OutputSink> onStart) {
            this.onStart = onStart;
        }

        @Override
        public ChannelProcess start(ProgramLaunch launch, OutputSink output) {
            ScriptedProcess p = new ScriptedProcess();
            started.add(p);
            onStart.accept(p, output);
            return p;
        }
    }

    private static final class ScriptedProcess implements ChannelProcess {
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        final CompletableFuture<Void> outputEnd = new CompletableFuture<>();
        final ByteArrayOutputStream stdin = new ByteArrayOutputStream();
        final CompletableFuture<Void> stdinClosed = new CompletableFuture<>();
        final AtomicInteger kills = new AtomicInteger();
        final List<ProgramSignal> signals = Collections.synchronizedList(new ArrayList<>());

        @Override
        public OutputStream stdin() {
            return new OutputStream() {
                @Override
                public void write(int b) {
                    synchronized (stdin) {
                        stdin.write(b);
                    }
                }

                @Override
                public void close() {
                    stdinClosed.complete(null);
                }
            };
        }

        @Override
        public CompletableFuture<Integer> exit() {
            return exit;
        }

        @Override
        public CompletableFuture<Void> outputEnd() {
            return outputEnd;
        }

        @Override
        public void signal(ProgramSignal signal) {
            signals.add(signal);
        }

        @Override
        public void killTree() {
            kills.incrementAndGet();
            exit.complete(137);
            outputEnd.complete(null);
        }
    }

    private static ProgramLaunch launch(String stdin, Duration timeout, int cap) {
        return new ProgramLaunch(List.of("prog"), Map.of(), "/w", stdin, timeout, cap, null);
    }

    private static void write(OutputSink sink, StdStream s, String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        sink.write(s, b, 0, b.length);
    }

    @Test
    void should_assemble_the_result_from_pushed_output_and_the_exit_status() {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> {
            write(sink, StdStream.STDOUT, "out");
            write(sink, StdStream.STDERR, "err");
            p.outputEnd.complete(null);
            p.exit.complete(4);
        });

        RunResult r = ProgramRuns.run(ch, launch(null, Duration.ofSeconds(30), 1024));

        assertThat(r.stdout()).isEqualTo("out");
        assertThat(r.stderr()).isEqualTo("err");
        assertThat(r.exitCode()).isEqualTo(4);
        assertThat(r.timedOut()).isFalse();
        assertThat(ch.started.get(0).kills).hasValue(0);
        assertThat(ch.started.get(0).stdinClosed).isDone();
    }

    @Test
    void should_cap_each_stream_and_mark_it_truncated() {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> {
            write(sink, StdStream.STDOUT, "x".repeat(100));
            write(sink, StdStream.STDERR, "short");
            p.outputEnd.complete(null);
            p.exit.complete(0);
        });

        RunResult r = ProgramRuns.run(ch, launch(null, Duration.ofSeconds(30), 10));

        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stdout()).isEqualTo("x".repeat(5) + "\n" + BoundedOutput.middleMarker(90) + "\n" + "x".repeat(5));
        assertThat(r.stderrTruncated()).isFalse();
    }

    @Test
    void should_kill_the_tree_and_mark_the_run_timed_out_when_the_program_outlives_its_timeout() {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> write(sink, StdStream.STDOUT, "partial"));

        RunResult r = ProgramRuns.run(ch, launch(null, Duration.ofMillis(50), 1024));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.stdout()).isEqualTo("partial");
        assertThat(ch.started.get(0).kills).hasValue(1);
    }

    @Test
    void should_kill_the_tree_when_output_does_not_end_after_the_program_exited() {
        // A leftover background process holds the output open after the program's exit.
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> {
            write(sink, StdStream.STDOUT, "done");
            p.exit.complete(0);
        });

        RunResult r = ProgramRuns.run(ch, launch(null, Duration.ofSeconds(30), 1024));

        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).isEqualTo("done");
        assertThat(ch.started.get(0).kills).hasValue(1);
    }

    @Test
    void should_write_stdin_then_close_it() throws Exception {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> p.stdinClosed.thenRun(() -> {
            p.outputEnd.complete(null);
            p.exit.complete(0);
        }));

        ProgramRuns.run(ch, launch("input", Duration.ofSeconds(30), 1024));

        ScriptedProcess p = ch.started.get(0);
        synchronized (p.stdin) {
            assertThat(p.stdin.toString(StandardCharsets.UTF_8)).isEqualTo("input");
        }
    }

    @Test
    void should_pass_a_start_failure_through_unchanged() {
        ProcessChannel failing = (l, sink) -> {
            throw new BackendUnavailableException("backend down");
        };

        assertThatThrownBy(() -> ProgramRuns.run(failing, launch(null, Duration.ofSeconds(5), 1024)))
                .isInstanceOf(BackendUnavailableException.class).hasMessage("backend down");
    }

    @Test
    void should_stop_a_session_with_a_signal_first_and_kill_after_the_grace() {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> write(sink, StdStream.STDOUT, "up\n"));
        try (ProgramSession s = ProgramRuns.startSession(ch, launch(null, Duration.ofSeconds(60), 1024), "s")) {
            ProgramPoll before = s.poll(0, 100);
            assertThat(before.output()).isEqualTo("up\n");
            assertThat(before.running()).isTrue();

            s.kill(Duration.ofMillis(50));

            ScriptedProcess p = ch.started.get(0);
            assertThat(p.signals).containsExactly(ProgramSignal.TERMINATE);
            assertThat(p.kills.get()).isPositive();
            assertThat(s.exitCode()).contains(137);
        }
    }

    @Test
    void should_end_a_session_at_its_life_time_limit() throws Exception {
        ScriptedChannel ch = new ScriptedChannel((p, sink) -> { });
        try (ProgramSession s = ProgramRuns.startSession(ch, launch(null, Duration.ofMillis(50), 1024), "s")) {
            ProgramPoll p = s.await(BOUND, 0, 100);

            assertThat(p.running()).isFalse();
            assertThat(p.timedOut()).isTrue();
            assertThat(s.exitCode()).contains(-1);
        }
    }
}
