package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The exec-channel base over a fake transport that records what the base asks of it. */
class RemoteProcessChannelTest {

    /** A transport without a far side: the test plays the reader. */
    static final class FakeChannel extends RemoteProcessChannel {
        final List<FakeProcess> started = new ArrayList<>();
        boolean endOutputOnKill = true;

        @Override
        protected RemoteProcess open(ProgramLaunch launch, OutputSink output) {
            FakeProcess p = new FakeProcess(output, endOutputOnKill);
            started.add(p);
            return p;
        }
    }

    static final class FakeProcess extends RemoteProcessChannel.RemoteProcess {
        final OutputSink sink;
        final boolean endOutputOnKill;
        final List<ProgramSignal> signals = new CopyOnWriteArrayList<>();
        final AtomicInteger kills = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        RuntimeException signalFailure;
        RuntimeException killFailure;

        FakeProcess(OutputSink sink, boolean endOutputOnKill) {
            super(ChunkedStdin.none());
            this.sink = sink;
            this.endOutputOnKill = endOutputOnKill;
        }

        /** What the transport's reader does when the far side reports the end. */
        void farSideEnded(int code) {
            exited(code);
            outputEnded();
        }

        @Override
        protected void sendSignal(ProgramSignal signal) {
            signals.add(signal);
            if (signalFailure != null) {
                throw signalFailure;
            }
        }

        @Override
        protected void killRemoteTree() {
            kills.incrementAndGet();
            if (killFailure != null) {
                throw killFailure;
            }
            if (endOutputOnKill) {
                farSideEnded(137);
            }
        }

        @Override
        protected void closeStream() {
            closes.incrementAndGet();
            farSideEnded(-1);
        }

        boolean lostFirst(RuntimeException e) {
            return lose(e);
        }
    }

    private static ProgramLaunch launch() {
        return new ProgramLaunch(List.of("prog"), Map.of(), "/", null, Duration.ofSeconds(30), 1024, null);
    }

    private static FakeProcess start(FakeChannel channel) {
        ChannelProcess p = channel.start(launch(), (stream, b, off, len) -> { });
        return (FakeProcess) p;
    }

    @Test
    void should_complete_exit_and_output_end_when_the_transport_reports_them() {
        FakeProcess p = start(new FakeChannel());

        assertThat(p.exit()).isNotDone();
        assertThat(p.outputEnd()).isNotDone();
        p.farSideEnded(3);

        assertThat(p.exit()).isCompletedWithValue(3);
        assertThat(p.outputEnd()).isDone();
    }

    @Test
    void should_signal_the_program_when_it_runs() {
        FakeProcess p = start(new FakeChannel());

        p.signal(ProgramSignal.INTERRUPT);

        assertThat(p.signals).containsExactly(ProgramSignal.INTERRUPT);
    }

    @Test
    void should_not_signal_when_the_program_ended() {
        FakeProcess p = start(new FakeChannel());
        p.farSideEnded(0);

        p.signal(ProgramSignal.TERMINATE);

        assertThat(p.signals).isEmpty();
    }

    @Test
    void should_not_signal_when_only_the_output_ended() {
        FakeProcess p = start(new FakeChannel());
        p.outputEnded(); // a Docker exec: the stream ended, the status is being fetched

        p.signal(ProgramSignal.TERMINATE);

        assertThat(p.signals).isEmpty();
    }

    @Test
    void should_swallow_a_failed_signal_when_the_transport_throws() {
        FakeProcess p = start(new FakeChannel());
        p.signalFailure = new IllegalStateException("far side gone");

        p.signal(ProgramSignal.TERMINATE);

        assertThat(p.signals).containsExactly(ProgramSignal.TERMINATE);
        assertThat(p.exit()).isNotDone();
    }

    @Test
    void should_kill_the_tree_once_when_killTree_is_called_from_many_threads() throws Exception {
        FakeChannel channel = new FakeChannel();
        channel.endOutputOnKill = false; // the kill ends nothing by itself: every caller could reach the transport
        FakeProcess p = start(channel);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                calls.add(pool.submit(() -> {
                    go.await();
                    Thread.currentThread().interrupt(); // the waiting part ends at once: the stream is closed
                    p.killTree();
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : calls) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(p.kills).hasValue(1);
        assertThat(p.closes).hasValue(1);
        assertThat(p.exit()).isCompletedWithValue(-1);
        assertThat(p.outputEnd()).isDone();
    }

    @Test
    void should_not_close_the_stream_when_the_kill_ended_the_output() {
        FakeProcess p = start(new FakeChannel());

        p.killTree();

        assertThat(p.kills).hasValue(1);
        assertThat(p.closes).hasValue(0);
        assertThat(p.exit()).isCompletedWithValue(137);
        assertThat(p.outputEnd()).isDone();
    }

    @Test
    void should_close_the_stream_and_keep_the_interrupt_when_interrupted_while_waiting_after_a_kill() {
        FakeChannel channel = new FakeChannel();
        channel.endOutputOnKill = false;
        FakeProcess p = start(channel);

        Thread.currentThread().interrupt();
        try {
            p.killTree();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }

        assertThat(p.closes).hasValue(1);
        assertThat(p.outputEnd()).isDone();
    }

    @Test
    void should_still_wait_for_the_output_when_the_transport_kill_throws() {
        FakeChannel channel = new FakeChannel();
        channel.endOutputOnKill = false;
        FakeProcess p = start(channel);
        p.killFailure = new IllegalStateException("kill refused");

        Thread.currentThread().interrupt();
        try {
            p.killTree();
        } finally {
            Thread.interrupted();
        }

        assertThat(p.kills).hasValue(1);
        assertThat(p.closes).hasValue(1);
        assertThat(p.outputEnd()).isDone();
    }

    @Test
    void should_not_kill_when_the_program_ended() {
        FakeProcess p = start(new FakeChannel());
        p.farSideEnded(0);

        p.killTree();

        assertThat(p.kills).hasValue(0);
        assertThat(p.closes).hasValue(0);
    }

    @Test
    void should_report_the_first_failure_of_the_last_program_when_its_stream_failed() {
        FakeChannel channel = new FakeChannel();
        assertThat(channel.failure()).isNull();
        FakeProcess p = start(channel);
        assertThat(channel.failure()).isNull();
        RuntimeException first = new IllegalStateException("stream broke");

        assertThat(p.lostFirst(first)).isTrue();
        assertThat(p.lostFirst(new IllegalStateException("container stopped"))).isFalse();

        assertThat(channel.failure()).isSameAs(first);
        assertThat(start(channel).lost()).isNull();
        assertThat(channel.failure()).isNull(); // the last program is a new one
    }

    @Test
    void should_kill_the_last_program_when_killRunning_is_called() {
        FakeChannel channel = new FakeChannel();
        channel.killRunning(); // nothing started: nothing to do
        FakeProcess p = start(channel);

        channel.killRunning();

        assertThat(p.kills).hasValue(1);
        assertThat(p.exit()).isDone();
    }

    @Test
    void should_push_output_into_the_sink_from_the_transport() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FakeChannel channel = new FakeChannel();
        FakeProcess p = (FakeProcess) channel.start(launch(), (stream, b, off, len) -> {
            if (stream == StdStream.STDOUT) {
                out.write(b, off, len);
            }
        });
        byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);

        p.sink.write(StdStream.STDOUT, hello, 0, hello.length);

        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    /** Records the messages a chunked stdin sends. */
    static final class RecordingStdin extends ChunkedStdin {
        final List<String> sent = new ArrayList<>();
        int ends;

        RecordingStdin(int chunk) {
            super(chunk);
        }

        @Override
        protected void send(byte[] b, int off, int len) {
            sent.add(new String(b, off, len, StandardCharsets.UTF_8));
        }

        @Override
        protected void sendEnd() {
            ends++;
        }
    }

    @Test
    void should_send_input_in_chunks_of_at_most_the_chunk_size_when_a_write_is_larger() throws IOException {
        RecordingStdin in = new RecordingStdin(4);

        in.write("abcdefghij".getBytes(StandardCharsets.UTF_8), 1, 9);
        in.write('z');

        assertThat(in.sent).containsExactly("bcde", "fghi", "j", "z");
    }

    @Test
    void should_send_the_end_once_and_refuse_writes_when_stdin_is_closed() {
        RecordingStdin in = new RecordingStdin(4);

        in.close();
        in.close();

        assertThat(in.ends).isEqualTo(1);
        assertThatThrownBy(() -> in.write(new byte[] {1}, 0, 1)).isInstanceOf(IOException.class);
        assertThat(in.sent).isEmpty();
    }

    @Test
    void should_refuse_writes_when_the_run_has_no_stdin() throws IOException {
        OutputStream none = ChunkedStdin.none();

        assertThatThrownBy(() -> none.write(1)).isInstanceOf(IOException.class);
        none.close(); // nothing to close
    }

    @Test
    void should_reject_a_chunk_size_when_it_is_not_positive() {
        assertThatThrownBy(() -> new RecordingStdin(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chunk (0)");
    }
}
