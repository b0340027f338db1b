package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.jupyter.JupyterMessage.Channel;
import dev.codeexec.spi.BoundedOutput;
import dev.codeexec.spi.CellOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one cell as its messages arrive: text in arrival order (streams, the value's {@code text/plain},
 * displays, the traceback) under one {@link BoundedOutput} cap, rich outputs saved as files, and completion, which is
 * the {@code execute_reply} on shell <em>and</em> {@code status: idle} on IOPub (the two channels are not ordered
 * against each other). Used by the one thread that waits for the cell.
 *
 * <p>Rich outputs follow the rules of {@link CellOutput}, which also holds the text: a display whose forms were saved
 * shows a line naming the files instead of its {@code text/plain} (for a figure,
 * {@code <Figure size 640x480 with 1 Axes>}).
 */
final class Cell {

    /** Saves one rich output under {@code out/} and returns its workspace-relative path. */
    @FunctionalInterface
    interface RichOutputs {
        String save(String extension, byte[] content);
    }

    private final ObjectMapper json;
    private final CellOutput out;
    private final RichOutputs rich;
    private final List<String> saved = new ArrayList<>();
    private boolean replied;
    private boolean idle;
    private String status = "";
    private boolean errorShown;
    private String errorName;
    /** The reply's summary of an error ("ename: evalue") and its name; null unless the reply said error. */
    private String replyError;
    private String replyErrorName;
    private boolean settled;

    Cell(ObjectMapper json, int maxOutputBytes, RichOutputs rich) {
        this.json = json;
        this.out = new CellOutput(maxOutputBytes);
        this.rich = rich;
    }

    /** Takes one message of this cell's request. */
    void accept(JupyterMessage m) {
        JsonNode c = m.content(json);
        if (m.channel() == Channel.SHELL) {
            if (m.msgType().equals("execute_reply")) {
                replied = true;
                status = c.path("status").asText("");
                if (status.equals("error")) {
                    replyError = c.path("ename").asText("Error") + ": " + c.path("evalue").asText("");
                    replyErrorName = c.path("ename").asText("");
                }
                settleWhenComplete();
            }
            return;
        }
        if (m.channel() != Channel.IOPUB) {
            return;
        }
        switch (m.msgType()) {
            case "status" -> {
                if (c.path("execution_state").asText("").equals("idle")) {
                    idle = true;
                    settleWhenComplete();
                }
            }
            case "stream" -> out.text(c.path("text").asText(""));
            case "execute_result" -> display(c.path("data"), true);
            case "display_data", "update_display_data" -> display(c.path("data"), false);
            case "error" -> {
                errorShown = true;
                errorName = c.path("ename").asText("");
                List<String> lines = new ArrayList<>();
                c.path("traceback").forEach(l -> lines.add(stripAnsi(l.asText(""))));
                block(lines.isEmpty() ? c.path("ename").asText("Error") + ": " + c.path("evalue").asText("")
                        : String.join("\n", lines));
                if ("StdinNotImplementedError".equals(errorName)) {
                    block("[this kernel has no standard input: input() and getpass() cannot be answered here; pass "
                            + "values in the code, or read them from a file under work/]");
                }
            }
            default -> {
                // execute_input, clear_output, comm messages: nothing for the output.
            }
        }
    }

    /**
     * What only the reply says, written once the cell is complete. The reply (shell channel) and the cell's output
     * (IOPub) travel on different sockets, so the reply may arrive before the output it summarises; only IOPub's idle
     * status comes after all of the cell's output. Writing the summary at the reply would put it before the output, and
     * twice when the traceback follows.
     */
    private void settleWhenComplete() {
        if (complete()) {
            settle();
        }
    }

    /**
     * Writes the reply's summary where the output did not say it: the error when no traceback came, or that the
     * kernel aborted the cell. Idempotent; also called when a cell ends without completing (a kernel that died).
     */
    void settle() {
        if (settled || !replied) {
            return;
        }
        settled = true;
        if (status.equals("error") && !errorShown) {
            block(replyError);
            errorName = replyErrorName;
        } else if (status.equals("aborted")) {
            block("[aborted: the kernel did not run this cell because an earlier one failed]");
        }
    }

    /** True once both the reply and the idle status have arrived. */
    boolean complete() {
        return replied && idle;
    }

    boolean replied() {
        return replied;
    }

    /** The reply's status: {@code ok}, {@code error}, {@code aborted}; empty before the reply. */
    String status() {
        return status;
    }

    /** The exception's name when the cell failed, else null. */
    String errorName() {
        return errorName;
    }

    /** The rich outputs saved, workspace-relative. */
    List<String> savedFiles() {
        return List.copyOf(saved);
    }

    /** Appends a line of this client's own (a note), on a line of its own. */
    void note(String line) {
        block(line);
    }

    boolean truncated() {
        return out.truncated();
    }

    /** The text so far, with a truncation marker when the cap was reached. */
    String text() {
        return out.text();
    }

    private void display(JsonNode data, boolean isValue) {
        List<String> files = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = data.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String mime = e.getKey();
            String ext = CellOutput.savedExtension(mime, isValue);
            if (ext == null) {
                continue;
            }
            byte[] bytes = decode(mime, e.getValue());
            if (bytes == null) {
                continue;
            }
            try {
                String path = rich.save(ext, bytes);
                saved.add(path);
                files.add(CellOutput.savedLine(path, mime, bytes.length));
            } catch (CodeExecException ex) {
                // out/ replaced by a link out of the workspace, say: the cell's other output still counts.
                block("[a display (" + mime + ") could not be saved: " + ex.getMessage() + "]");
            }
        }
        out.display(joined(data.path("text/plain")), isValue, files);
    }

    /** The bytes of one form: base64 for binary types, UTF-8 for text, the JSON itself for JSON. Null if broken. */
    private byte[] decode(String mime, JsonNode value) {
        if (mime.equals("application/json")) {
            try {
                return json.writerWithDefaultPrettyPrinter().writeValueAsBytes(value);
            } catch (IOException e) {
                return null;
            }
        }
        String text = joined(value);
        return text == null ? null : CellOutput.formBytes(mime, text);
    }

    /** A string, or a list of strings joined (the multi-line form), or null. */
    private static String joined(JsonNode v) {
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isArray()) {
            StringBuilder sb = new StringBuilder();
            v.forEach(x -> sb.append(x.asText("")));
            return sb.toString();
        }
        return null;
    }

    /** Text on lines of its own. */
    private void block(String s) {
        out.block(s);
    }

    static String stripAnsi(String s) {
        return CellOutput.stripAnsi(s);
    }
}
