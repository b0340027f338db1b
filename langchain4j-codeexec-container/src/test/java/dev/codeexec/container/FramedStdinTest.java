package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The framing of an exec's standard input, read back as the run's wrapper decodes it ({@code <length>\n} and that
 * many bytes, {@code 0\n} for end of file), no Docker engine needed. Input that looks like framing is data; only
 * {@link FramedStdin#close()} ends the input, and an empty write must not.
 */
class FramedStdinTest {

    @Test
    void should_frame_each_write_and_end_with_a_zero_frame_when_closed() throws IOException {
        FramedStdin stdin = new FramedStdin();
        stdin.write("hello".getBytes(StandardCharsets.US_ASCII));
        stdin.write('!');
        stdin.close();

        assertThat(wire(stdin)).isEqualTo("5\nhello1\n!0\n");
    }

    @Test
    void should_deliver_input_that_looks_like_framing_as_data_when_the_program_reads_it() throws IOException {
        FramedStdin stdin = new FramedStdin();
        String tricky = "0\n";
        String more = "3\nabc\n0\n\n";
        stdin.write(tricky.getBytes(StandardCharsets.US_ASCII));
        stdin.write(more.getBytes(StandardCharsets.US_ASCII));
        stdin.close();

        Decoded d = decode(stdin.input());
        assertThat(d.data()).isEqualTo(tricky + more);
        assertThat(d.ended()).isTrue();
    }

    @Test
    void should_not_end_the_input_when_a_write_is_empty() throws IOException {
        FramedStdin stdin = new FramedStdin();
        stdin.write("before".getBytes(StandardCharsets.US_ASCII));
        stdin.write(new byte[0]);
        stdin.write(new byte[8], 3, 0);
        stdin.write("after".getBytes(StandardCharsets.US_ASCII));
        stdin.close();

        Decoded d = decode(stdin.input());
        assertThat(d.data()).isEqualTo("beforeafter");
        assertThat(d.ended()).isTrue();
    }

    @Test
    void should_send_only_the_given_slice_when_writing_part_of_an_array() throws IOException {
        FramedStdin stdin = new FramedStdin();
        stdin.write("xxabcxx".getBytes(StandardCharsets.US_ASCII), 2, 3);
        stdin.close();

        assertThat(wire(stdin)).isEqualTo("3\nabc0\n");
    }

    @Test
    void should_refuse_writes_and_send_one_end_when_closed_twice() throws IOException {
        FramedStdin stdin = new FramedStdin();
        stdin.close();
        stdin.close();

        assertThatThrownBy(() -> stdin.write('x')).isInstanceOf(IOException.class);
        assertThat(wire(stdin)).isEqualTo("0\n");
    }

    @Test
    void should_end_the_reader_and_refuse_writes_when_the_program_ended() throws IOException {
        FramedStdin stdin = new FramedStdin();
        stdin.write("lost".getBytes(StandardCharsets.US_ASCII));
        stdin.kill();

        assertThatThrownBy(() -> stdin.write('x')).isInstanceOf(IOException.class);
        assertThat(stdin.input().read()).isEqualTo(-1);
        assertThat(stdin.input().read()).isEqualTo(-1);
        stdin.close();
        assertThat(stdin.input().read()).isEqualTo(-1);
    }

    @Test
    void should_release_a_writer_blocked_on_a_full_queue_when_the_program_ended() throws Exception {
        FramedStdin stdin = new FramedStdin();
        // Nobody reads: enough writes to fill the queue, so that the writer blocks at some point (or fails once
        // the program ended). Either way it must end with an IOException, not hang.
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < 10_000; i++) {
                    stdin.write('x');
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        stdin.kill();

        assertThatThrownBy(writer::get).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(java.io.UncheckedIOException.class);
        assertThat(stdin.input().read()).isEqualTo(-1);
    }

    @Test
    void should_give_the_pump_thread_its_own_failure_handler_when_it_reads() throws Exception {
        FramedStdin stdin = new FramedStdin();
        stdin.close();
        AtomicReference<Thread.UncaughtExceptionHandler> idle = new AtomicReference<>();
        AtomicReference<Thread.UncaughtExceptionHandler> pumping = new AtomicReference<>();
        Thread other = new Thread(() -> idle.set(Thread.currentThread().getUncaughtExceptionHandler()));
        Thread pump = new Thread(() -> {
            try {
                stdin.input().readAllBytes();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            pumping.set(Thread.currentThread().getUncaughtExceptionHandler());
        });
        other.start();
        pump.start();
        other.join();
        pump.join();

        assertThat(idle.get()).isInstanceOf(ThreadGroup.class);
        assertThat(pumping.get()).isNotNull().isNotInstanceOf(ThreadGroup.class);
    }

    @Test
    void should_send_raw_bytes_unchanged_and_no_end_frame_when_raw() throws IOException {
        FramedStdin stdin = FramedStdin.raw();
        byte[] every = new byte[512];
        for (int i = 0; i < every.length; i++) {
            every[i] = (byte) i; // every byte value twice: CR, LF, NUL and digits among them
        }
        stdin.write(every);
        stdin.write("0\n".getBytes(StandardCharsets.US_ASCII));
        stdin.write(every, 10, 3);
        stdin.close();

        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.write(every);
        expected.write('0');
        expected.write('\n');
        expected.write(every, 10, 3);
        assertThat(stdin.input().readAllBytes()).isEqualTo(expected.toByteArray());
        assertThatThrownBy(() -> stdin.write('x')).isInstanceOf(IOException.class);
    }

    // ------------------------------------------------------------------ the wrapper's side

    private static String wire(FramedStdin stdin) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        stdin.input().transferTo(out);
        return out.toString(StandardCharsets.US_ASCII);
    }

    private record Decoded(String data, boolean ended) {
    }

    /** Decodes frames as {@link ExecScripts#RUN} does: stops at the first {@code 0\n}. */
    private static Decoded decode(InputStream in) throws IOException {
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        while (true) {
            StringBuilder head = new StringBuilder();
            int c;
            while ((c = in.read()) != '\n') {
                if (c < 0) {
                    return new Decoded(data.toString(StandardCharsets.US_ASCII), false);
                }
                head.append((char) c);
            }
            int n = Integer.parseInt(head.toString());
            if (n == 0) {
                return new Decoded(data.toString(StandardCharsets.US_ASCII), true);
            }
            data.write(in.readNBytes(n));
        }
    }
}
