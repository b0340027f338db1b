package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Random;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BoundedOutputTest {

    @Test
    void should_keep_everything_when_under_cap() {
        BoundedOutput out = new BoundedOutput(16);
        write(out, "hello\n");

        assertThat(out.text()).isEqualTo("hello\n");
        assertThat(out.truncated()).isFalse();
        assertThat(out.droppedBytes()).isZero();
    }

    @Test
    void should_not_mark_truncation_when_output_is_exactly_the_cap() {
        BoundedOutput out = new BoundedOutput(4);
        write(out, "ab");
        write(out, "cd");

        assertThat(out.text()).isEqualTo("abcd");
        assertThat(out.truncated()).isFalse();
    }

    @Test
    void should_keep_the_start_and_the_end_and_count_the_middle_when_over_cap() {
        BoundedOutput out = new BoundedOutput(4);
        write(out, "abc");
        write(out, "defgh");
        write(out, "ij");

        assertThat(out.bytes()).isEqualTo("abij".getBytes(StandardCharsets.UTF_8));
        assertThat(out.droppedBytes()).isEqualTo(6);
        assertThat(out.totalBytes()).isEqualTo(10);
        assertThat(out.truncated()).isTrue();
        assertThat(out.text()).isEqualTo("ab\n" + BoundedOutput.middleMarker(6) + "\nij");
        assertThat(BoundedOutput.middleMarker(6))
                .isEqualTo("[output truncated: 6 bytes dropped here; the end of the output follows]");
    }

    @Test
    void should_end_with_the_marker_when_the_cap_leaves_no_room_for_an_end() {
        BoundedOutput out = new BoundedOutput(1);
        write(out, "abc");

        assertThat(out.text()).isEqualTo("a\n" + BoundedOutput.marker(2));
        assertThat(BoundedOutput.marker(2)).isEqualTo("[output truncated: 2 bytes dropped]");
    }

    @Test
    void should_not_add_blank_line_before_marker_when_kept_text_ends_with_newline() {
        BoundedOutput out = new BoundedOutput(6);
        write(out, "ab\ncdefgh");

        assertThat(out.text()).isEqualTo("ab\n" + BoundedOutput.middleMarker(3) + "\nfgh");
    }

    @Test
    void should_honour_offset_and_length_when_writing_a_slice() {
        BoundedOutput out = new BoundedOutput(3);
        byte[] b = "xxABCDxx".getBytes(StandardCharsets.UTF_8);
        out.write(b, 2, 4);

        assertThat(out.bytes()).isEqualTo("ABD".getBytes(StandardCharsets.UTF_8));
        assertThat(out.droppedBytes()).isEqualTo(1);
    }

    @Test
    void should_not_show_broken_characters_when_the_cut_splits_utf8() {
        BoundedOutput out = new BoundedOutput(8);
        // "aé€€€" is 12 bytes: the head (4 bytes) ends inside the first €, the end (4 bytes) starts inside the second.
        write(out, "aé€€€");

        assertThat(out.bytes()).hasSize(8);
        assertThat(out.text()).isEqualTo("aé\n" + BoundedOutput.middleMarker(6) + "\n€").doesNotContain("\uFFFD");
    }

    @Test
    void should_keep_the_real_last_line_and_stay_bounded_when_a_program_prints_3_mib() {
        int cap = 1 << 20;
        BoundedOutput out = new BoundedOutput(cap);
        byte[] line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 3 * (1 << 20) / line.length; i++) {
            out.write(line, 0, line.length);
        }
        write(out, "FINAL: 3 passed, 0 failed\n");

        String text = out.text();
        assertThat(text).startsWith(new String(line, StandardCharsets.UTF_8)).endsWith("FINAL: 3 passed, 0 failed\n")
                .contains("[output truncated: ");
        assertThat(out.bufferBytes()).isLessThanOrEqualTo(cap);
        assertThat(out.bytes()).hasSize(cap);
    }

    @Test
    void should_keep_exactly_the_first_and_last_bytes_when_chunks_of_any_size_are_written() {
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            int cap = 1 + random.nextInt(64);
            BoundedOutput out = new BoundedOutput(cap);
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            int chunks = random.nextInt(20);
            for (int c = 0; c < chunks; c++) {
                byte[] chunk = new byte[random.nextInt(3 * cap)];
                random.nextBytes(chunk);
                out.write(chunk, 0, chunk.length);
                all.write(chunk, 0, chunk.length);
            }
            byte[] whole = all.toByteArray();
            int headCap = cap - cap / 2;
            byte[] expected = whole.length <= cap ? whole : concat(Arrays.copyOf(whole, headCap),
                    Arrays.copyOfRange(whole, whole.length - cap / 2, whole.length));

            assertThat(out.bytes()).as("round %d", round).isEqualTo(expected);
            assertThat(out.droppedBytes()).isEqualTo(Math.max(0, whole.length - cap));
        }
    }

    @Test
    void should_give_the_whole_stream_to_the_overflow_once_it_outgrows_the_cap() {
        ByteArrayOutputStream saved = new ByteArrayOutputStream();
        BoundedOutput out = new BoundedOutput(8, saved::write);
        write(out, "abcde");
        write(out, "fgh");
        assertThat(saved.size()).as("nothing is given while the stream fits").isZero();

        write(out, "ijklmnopqrstuvwxyz");
        write(out, "!");

        assertThat(saved.toString(StandardCharsets.UTF_8)).isEqualTo("abcdefghijklmnopqrstuvwxyz!");
    }

    @Test
    void should_keep_replacement_characters_when_program_writes_invalid_utf8_under_cap() {
        BoundedOutput out = new BoundedOutput(16);
        out.write(new byte[] {'a', (byte) 0xff, 'b'}, 0, 3);

        assertThat(out.text()).isEqualTo("a\uFFFDb");
    }

    @Test
    void should_never_keep_more_than_cap_when_writers_are_concurrent() throws Exception {
        BoundedOutput out = new BoundedOutput(1000);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    byte[] chunk = new byte[37];
                    for (int i = 0; i < 100; i++) {
                        out.write(chunk, 0, chunk.length);
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(out.bytes()).hasSize(1000);
        assertThat(out.droppedBytes()).isEqualTo(4 * 100 * 37 - 1000);
    }

    @Test
    void should_refuse_cap_when_not_positive() {
        assertThatThrownBy(() -> new BoundedOutput(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cap (0)");
    }

    private static void write(BoundedOutput out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
