package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
    void should_keep_first_bytes_and_count_the_rest_when_over_cap() {
        BoundedOutput out = new BoundedOutput(4);
        write(out, "abc");
        write(out, "defgh");
        write(out, "ij");

        assertThat(out.bytes()).isEqualTo("abcd".getBytes(StandardCharsets.UTF_8));
        assertThat(out.droppedBytes()).isEqualTo(6);
        assertThat(out.truncated()).isTrue();
        assertThat(out.text()).isEqualTo("abcd\n" + BoundedOutput.marker(6));
        assertThat(BoundedOutput.marker(6)).isEqualTo("[output truncated: 6 bytes dropped]");
    }

    @Test
    void should_not_add_blank_line_before_marker_when_kept_text_ends_with_newline() {
        BoundedOutput out = new BoundedOutput(3);
        write(out, "ab\ncd");

        assertThat(out.text()).isEqualTo("ab\n[output truncated: 2 bytes dropped]");
    }

    @Test
    void should_honour_offset_and_length_when_writing_a_slice() {
        BoundedOutput out = new BoundedOutput(3);
        byte[] b = "xxABCDxx".getBytes(StandardCharsets.UTF_8);
        out.write(b, 2, 4);

        assertThat(out.bytes()).isEqualTo("ABC".getBytes(StandardCharsets.UTF_8));
        assertThat(out.droppedBytes()).isEqualTo(1);
    }

    @Test
    void should_not_end_text_with_broken_character_when_cap_splits_utf8() {
        BoundedOutput out = new BoundedOutput(4);
        // "aé€": a (1 byte), é (2 bytes), € (3 bytes); the cap cuts € after its first byte.
        write(out, "aé€");

        assertThat(out.bytes()).hasSize(4);
        assertThat(out.text()).isEqualTo("aé\n" + BoundedOutput.marker(3)).doesNotContain("\uFFFD");
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
}
