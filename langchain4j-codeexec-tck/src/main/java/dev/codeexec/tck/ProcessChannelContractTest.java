package dev.codeexec.tck;

import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of a {@link ProcessChannel}: what {@link dev.codeexec.spi.ProgramRuns} relies on. A backend's test
 * class extends it and says how it runs a shell script; nothing here depends on how the backend starts programs.
 *
 * <p>Every wait is bounded generously ({@link #BOUND}) and waits for an event, never for a margin of time.
 */
public abstract class ProcessChannelContractTest {

    /** The longest any event may take; far beyond what it needs on a loaded machine. */
    protected static final Duration BOUND = Duration.ofSeconds(60);

    private ChannelProcess started;

    /** The channel under test. */
    protected abstract ProcessChannel channel();

    /**
     * A launch that runs {@code script} with a POSIX shell in the backend, with a timeout the test never reaches.
     * Any launcher or wrapper the backend needs is included.
     */
    protected abstract ProgramLaunch shellLaunch(String script);

    @AfterEach
    void killLeftovers() {
        if (started != null) {
            started.killTree();
        }
    }

    /** Output as the channel delivered it, by stream. */
    protected static final class Recorder implements OutputSink {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final ByteArrayOutputStream err = new ByteArrayOutputStream();

        @Override
        public synchronized void write(StdStream stream, byte[] bytes, int offset, int length) {
            (stream == StdStream.STDOUT ? out : err).write(bytes, offset, length);
        }

        public synchronized String stdout() {
            return out.toString(StandardCharsets.UTF_8);
        }

        public synchronized String stderr() {
            return err.toString(StandardCharsets.UTF_8);
        }

        /** Waits until stdout contains {@code text}; false after {@link #BOUND}. */
        public boolean awaitStdout(String text) throws InterruptedException {
            long end = System.nanoTime() + BOUND.toNanos();
            while (System.nanoTime() < end) {
                if (stdout().contains(text)) {
                    return true;
                }
                Thread.sleep(20);
            }
            return false;
        }
    }

    private ChannelProcess start(String script, Recorder rec) {
        started = channel().start(shellLaunch(script), rec);
        return started;
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void should_push_each_stream_in_order_and_report_the_exit_status() throws Exception {
        Recorder rec = new Recorder();
        ChannelProcess p = start("printf one; printf two >&2; printf ' three'; exit 7", rec);
        p.stdin().close();

        assertThat(await(p.exit())).isEqualTo(7);
        await(p.outputEnd());
        assertThat(rec.stdout()).isEqualTo("one three");
        assertThat(rec.stderr()).isEqualTo("two");
    }

    @Test
    void should_deliver_every_byte_of_a_large_output() throws Exception {
        Recorder rec = new Recorder();
        ChannelProcess p = start("i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done", rec);
        p.stdin().close();

        assertThat(await(p.exit())).isZero();
        await(p.outputEnd());
        String[] lines = rec.stdout().split("\n");
        assertThat(lines).hasSize(20000);
        assertThat(lines[0]).isEqualTo("line-0");
        assertThat(lines[19999]).isEqualTo("line-19999");
    }

    @Test
    void should_give_the_program_its_input_and_end_of_file_when_stdin_is_closed() throws Exception {
        Recorder rec = new Recorder();
        ChannelProcess p = start("cat; echo '<eof>'", rec);
        try (OutputStream in = p.stdin()) {
            in.write("hello\nworld\n".getBytes(StandardCharsets.UTF_8));
        }

        assertThat(await(p.exit())).isZero();
        await(p.outputEnd());
        assertThat(rec.stdout()).isEqualTo("hello\nworld\n<eof>\n");
    }

    @Test
    void should_let_the_program_handle_a_terminate_signal() throws Exception {
        Recorder rec = new Recorder();
        ChannelProcess p = start("trap 'echo bye; exit 3' TERM; echo up; while :; do sleep 0.1; done", rec);
        assertThat(rec.awaitStdout("up\n")).isTrue();

        p.signal(ProgramSignal.TERMINATE);

        assertThat(await(p.exit())).isEqualTo(3);
        await(p.outputEnd());
        assertThat(rec.stdout()).isEqualTo("up\nbye\n");
    }

    @Test
    void should_kill_the_whole_tree_including_a_detached_daemon_that_holds_the_output() throws Exception {
        Recorder rec = new Recorder();
        // A double fork: the daemon is re-parented away from the tree and keeps stdout open, so the output ends only
        // when it is dead too.
        ChannelProcess p = start("(setsid sh -c 'sleep 600' &); echo up; sleep 600", rec);
        p.stdin().close();
        assertThat(rec.awaitStdout("up\n")).isTrue();
        assertThat(p.exit()).isNotDone();

        p.killTree();

        await(p.exit());
        await(p.outputEnd());
        assertThat(rec.stdout()).isEqualTo("up\n");
    }

    @Test
    void should_accept_kills_and_signals_after_the_program_ended() throws Exception {
        Recorder rec = new Recorder();
        ChannelProcess p = start("exit 0", rec);
        p.stdin().close();
        assertThat(await(p.exit())).isZero();
        await(p.outputEnd());

        assertThatCode(() -> {
            p.signal(ProgramSignal.TERMINATE);
            p.killTree();
            p.killTree();
        }).doesNotThrowAnyException();
        assertThat(await(p.exit())).isZero();
    }
}
