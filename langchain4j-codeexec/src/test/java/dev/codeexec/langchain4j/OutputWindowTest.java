package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OutputWindowTest {

    @Test
    void should_keep_text_that_fits() {
        assertThat(OutputWindow.window("hello", 5).text()).isEqualTo("hello");
        assertThat(OutputWindow.window("hello", 5).cut()).isFalse();
    }

    @Test
    void should_keep_head_and_tail_and_count_what_was_left_out() {
        OutputWindow.Window w = OutputWindow.window("0123456789", 4);

        assertThat(w.text()).isEqualTo("01\n...[6 bytes omitted]...\n89");
        assertThat(w.omittedBytes()).isEqualTo(6);
    }

    @Test
    void should_cut_on_character_boundaries_when_text_is_multibyte() {
        String text = "é".repeat(100);

        OutputWindow.Window w = OutputWindow.window(text, 11);

        String[] parts = w.text().split("\n\\.\\.\\.\\[\\d+ bytes omitted\\]\\.\\.\\.\n");
        assertThat(parts[0]).matches("é+");
        assertThat(parts[1]).matches("é+");
        assertThat(parts[0].getBytes(StandardCharsets.UTF_8).length + parts[1].getBytes(StandardCharsets.UTF_8).length
                + w.omittedBytes()).isEqualTo(200);
    }

    @Test
    void should_give_a_short_stream_its_size_and_the_rest_to_the_other() {
        assertThat(OutputWindow.split(10, 1000, 100)).containsExactly(10, 90);
        assertThat(OutputWindow.split(1000, 10, 100)).containsExactly(90, 10);
        assertThat(OutputWindow.split(1000, 1000, 100)).containsExactly(50, 50);
        assertThat(OutputWindow.split(30, 40, 100)).containsExactly(30, 40);
    }

    @Test
    void should_count_utf8_bytes_like_the_encoder() {
        String s = "a é € 😀";
        assertThat(OutputWindow.utf8Length(s)).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
    }
}
