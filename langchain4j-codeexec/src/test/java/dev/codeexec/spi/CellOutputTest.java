package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The text and rich-output rules shared by the interpreter engines' cells. */
class CellOutputTest {

    @Test
    void should_put_blocks_on_lines_of_their_own_when_a_stream_ended_mid_line() {
        CellOutput out = new CellOutput(1000);
        out.text("partial");
        out.block("Traceback");
        out.text("more\n");
        out.block("note");

        assertThat(out.text()).isEqualTo("partial\nTraceback\nmore\nnote\n");
        assertThat(out.truncated()).isFalse();
    }

    @Test
    void should_show_saved_files_instead_of_the_plain_text_when_a_display_was_saved() {
        CellOutput out = new CellOutput(1000);
        out.display("<Figure>", false, List.of(CellOutput.savedLine("out/display_1.png", "image/png", 3)));
        out.display("42", true, List.of());
        out.display("plain only", false, List.of());

        assertThat(out.text()).isEqualTo("[display saved as out/display_1.png (image/png, 3 bytes)]\n42\nplain only\n");
    }

    @Test
    void should_keep_the_plain_text_of_a_value_when_its_picture_was_saved() {
        CellOutput out = new CellOutput(1000);
        out.display("<Figure>", true, List.of("out/display_1.png (image/png, 3 bytes)"));

        assertThat(out.text()).isEqualTo("<Figure>\n[display saved as out/display_1.png (image/png, 3 bytes)]\n");
    }

    @Test
    void should_save_pictures_from_values_but_text_forms_from_displays_only() {
        assertThat(CellOutput.savedExtension("image/png", true)).isEqualTo("png");
        assertThat(CellOutput.savedExtension("application/pdf", true)).isEqualTo("pdf");
        assertThat(CellOutput.savedExtension("text/html", true)).isNull();
        assertThat(CellOutput.savedExtension("text/html", false)).isEqualTo("html");
        assertThat(CellOutput.savedExtension("text/plain", false)).isNull();
        assertThat(CellOutput.savedExtension("application/x-unknown", false)).isNull();
    }

    @Test
    void should_decode_base64_with_line_breaks_and_refuse_broken_base64() {
        String b64 = Base64.getEncoder().encodeToString(new byte[] {1, 2, 3, 4, 5, 6});
        assertThat(CellOutput.formBytes("image/png", b64.substring(0, 4) + "\n" + b64.substring(4)))
                .containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(CellOutput.formBytes("image/png", "not base64!")).isNull();
        assertThat(CellOutput.formBytes("image/svg+xml", "<svg/>")).isEqualTo("<svg/>".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void should_strip_ansi_colours_when_a_traceback_has_them() {
        assertThat(CellOutput.stripAnsi("\u001b[1;32mok\u001b[0m \u001b[2K\u001b[Adone")).isEqualTo("ok done");
    }

    @Test
    void should_mark_the_text_truncated_when_it_outgrows_the_cap() {
        CellOutput out = new CellOutput(8);
        out.text("x".repeat(100));

        assertThat(out.truncated()).isTrue();
    }
}
