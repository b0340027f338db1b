package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a cell's messages become its result: the completion rule, text order, rich outputs, errors. */
class JupyterCellTest {

    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, byte[]> files = new LinkedHashMap<>();
    private final Cell cell = new Cell(json, 1 << 20, (ext, bytes) -> {
        String name = "out/display_" + (files.size() + 1) + "." + ext;
        files.put(name, bytes);
        return name;
    });

    private static JupyterMessage iopub(String type, String content) {
        return new JupyterMessage(Channel.IOPUB, type, "m", "req", content.getBytes(StandardCharsets.UTF_8));
    }

    private static JupyterMessage reply(String content) {
        return new JupyterMessage(Channel.SHELL, "execute_reply", "r", "req", content.getBytes(StandardCharsets.UTF_8));
    }

    private static final JupyterMessage IDLE = iopub("status", "{\"execution_state\":\"idle\"}");
    private static final JupyterMessage BUSY = iopub("status", "{\"execution_state\":\"busy\"}");
    private static final JupyterMessage OK = reply("{\"status\":\"ok\",\"execution_count\":1}");

    @Test
    void should_complete_only_when_both_the_reply_and_idle_arrived_in_either_order() {
        cell.accept(BUSY);
        cell.accept(OK);
        assertThat(cell.complete()).as("reply without idle").isFalse();
        cell.accept(IDLE);
        assertThat(cell.complete()).isTrue();

        Cell other = new Cell(json, 1024, (e, b) -> "x");
        other.accept(IDLE);
        assertThat(other.complete()).as("idle without reply").isFalse();
        other.accept(OK);
        assertThat(other.complete()).isTrue();
        assertThat(other.status()).isEqualTo("ok");
    }

    @Test
    void should_keep_streams_and_the_value_in_arrival_order() {
        cell.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"out 1\"}"));
        cell.accept(iopub("stream", "{\"name\":\"stderr\",\"text\":\"err\\n\"}"));
        cell.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"out 2\"}"));
        cell.accept(iopub("execute_result", "{\"execution_count\":1,\"data\":{\"text/plain\":\"42\"}}"));

        assertThat(cell.text()).isEqualTo("out 1err\nout 2\n42\n");
    }

    @Test
    void should_show_the_traceback_without_colours_and_the_error_name() {
        cell.accept(iopub("error", "{\"ename\":\"ZeroDivisionError\",\"evalue\":\"division by zero\",\"traceback\":"
                + "[\"\\u001b[0;31m---------\\u001b[0m\",\"\\u001b[0;31mZeroDivisionError\\u001b[0m: division by zero\"]}"));
        cell.accept(reply("{\"status\":\"error\",\"ename\":\"ZeroDivisionError\",\"evalue\":\"division by zero\"}"));

        assertThat(cell.text()).isEqualTo("---------\nZeroDivisionError: division by zero\n");
        assertThat(cell.status()).isEqualTo("error");
        assertThat(cell.errorName()).isEqualTo("ZeroDivisionError");
    }

    @Test
    void should_use_the_reply_when_no_error_message_came() {
        cell.accept(reply("{\"status\":\"error\",\"ename\":\"KeyError\",\"evalue\":\"'x'\"}"));
        cell.accept(IDLE);

        assertThat(cell.text()).isEqualTo("KeyError: 'x'\n");
        assertThat(cell.errorName()).isEqualTo("KeyError");
    }

    @Test
    void should_keep_the_output_in_order_and_the_traceback_once_when_the_reply_arrives_before_the_output() {
        // The reply travels on the shell socket, the output on IOPub: a loaded kernel host can deliver the reply
        // first. Only IOPub's idle comes after all of the cell's output.
        cell.accept(BUSY);
        cell.accept(reply("{\"status\":\"error\",\"ename\":\"ZeroDivisionError\",\"evalue\":\"division by zero\"}"));
        cell.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"before\\n\"}"));
        cell.accept(iopub("error", "{\"ename\":\"ZeroDivisionError\",\"evalue\":\"division by zero\",\"traceback\":"
                + "[\"----> 4 f(0)\",\"ZeroDivisionError: division by zero\"]}"));
        cell.accept(IDLE);

        assertThat(cell.complete()).isTrue();
        assertThat(cell.text()).isEqualTo("before\n----> 4 f(0)\nZeroDivisionError: division by zero\n");
        assertThat(cell.status()).isEqualTo("error");
        assertThat(cell.errorName()).isEqualTo("ZeroDivisionError");
    }

    @Test
    void should_save_images_and_name_them_in_place_of_their_text_form() {
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10, 0, 1, 2};
        cell.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"before\\n\"}"));
        cell.accept(iopub("display_data", "{\"data\":{\"image/png\":\"" + Base64.getMimeEncoder().encodeToString(png)
                + "\",\"text/plain\":\"<Figure size 640x480 with 1 Axes>\"},\"metadata\":{}}"));
        cell.accept(iopub("display_data", "{\"data\":{\"image/svg+xml\":[\"<svg>\",\"</svg>\"],"
                + "\"text/plain\":\"<svg>\"}}"));

        assertThat(files.keySet()).containsExactly("out/display_1.png", "out/display_2.svg");
        assertThat(files.get("out/display_1.png")).isEqualTo(png);
        assertThat(new String(files.get("out/display_2.svg"), StandardCharsets.UTF_8)).isEqualTo("<svg></svg>");
        assertThat(cell.text()).isEqualTo("before\n[display saved as out/display_1.png (image/png, 11 bytes)]\n"
                + "[display saved as out/display_2.svg (image/svg+xml, 11 bytes)]\n");
        assertThat(cell.savedFiles()).containsExactly("out/display_1.png", "out/display_2.svg");
    }

    @Test
    void should_save_html_and_json_of_a_display_but_only_pictures_of_a_value() {
        cell.accept(iopub("execute_result", "{\"data\":{\"text/html\":\"<table/>\",\"text/plain\":\"   a\\n0  1\"}}"));
        assertThat(files).isEmpty();
        assertThat(cell.text()).isEqualTo("   a\n0  1\n");

        cell.accept(iopub("display_data", "{\"data\":{\"text/html\":\"<b>x</b>\",\"application/json\":{\"a\":1},"
                + "\"text/plain\":\"x\"}}"));
        assertThat(files.keySet()).containsExactlyInAnyOrder("out/display_1.html", "out/display_2.json");
        assertThat(new String(files.get("out/display_2.json"), StandardCharsets.UTF_8)).contains("\"a\" : 1");
    }

    @Test
    void should_show_the_text_of_a_display_without_a_saved_form() {
        cell.accept(iopub("display_data", "{\"data\":{\"text/plain\":\"just text\"}}"));
        cell.accept(iopub("display_data", "{\"data\":{\"application/vnd.custom\":\"?\",\"text/plain\":\"custom\"}}"));

        assertThat(cell.text()).isEqualTo("just text\ncustom\n");
        assertThat(files).isEmpty();
    }

    @Test
    void should_note_a_display_that_could_not_be_saved_and_go_on() {
        Cell c = new Cell(json, 4096, (ext, bytes) -> {
            throw new PathEscapeException("out leaves the workspace");
        });
        c.accept(iopub("display_data", "{\"data\":{\"image/png\":\"AAAA\"}}"));
        c.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"after\\n\"}"));

        assertThat(c.text()).contains("could not be saved: out leaves the workspace").endsWith("after\n");
    }

    @Test
    void should_explain_that_the_kernel_has_no_stdin() {
        cell.accept(iopub("error", "{\"ename\":\"StdinNotImplementedError\",\"evalue\":\"raw_input was called\","
                + "\"traceback\":[\"StdinNotImplementedError: raw_input was called\"]}"));

        assertThat(cell.text()).contains("StdinNotImplementedError").contains("this kernel has no standard input");
    }

    @Test
    void should_say_when_the_kernel_aborted_the_cell() {
        cell.accept(reply("{\"status\":\"aborted\"}"));
        cell.accept(IDLE);

        assertThat(cell.status()).isEqualTo("aborted");
        assertThat(cell.text()).contains("[aborted");
    }

    @Test
    void should_cap_the_text_and_mark_it() {
        Cell small = new Cell(json, 100, (e, b) -> "x");
        List<String> chunks = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            chunks.add("0123456789");
            small.accept(iopub("stream", "{\"name\":\"stdout\",\"text\":\"0123456789\"}"));
        }

        assertThat(small.truncated()).isTrue();
        String all = String.join("", chunks);
        assertThat(small.text()).startsWith(all.substring(0, 50))
                .contains("[output truncated: 400 bytes dropped here; the end of the output follows]")
                .endsWith(all.substring(all.length() - 50));
    }

    @Test
    void should_read_a_broken_content_frame_as_empty() {
        cell.accept(iopub("stream", "not json"));
        cell.accept(iopub("status", "{\"execution_state\":"));

        assertThat(cell.text()).isEmpty();
        assertThat(cell.complete()).isFalse();
    }

    @Test
    void should_strip_colour_and_cursor_sequences() {
        assertThat(Cell.stripAnsi("\u001b[1;32mok\u001b[0m \u001b[2K\u001b[Adone")).isEqualTo("ok done");
    }
}
