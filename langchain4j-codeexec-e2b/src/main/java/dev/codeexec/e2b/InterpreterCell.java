package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.engine.PutFile;
import dev.codeexec.spi.BoundedOutput;
import dev.codeexec.spi.CellOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one cell as the code interpreter's items arrive: text in arrival order (streams, a result's text,
 * the traceback) under one {@link BoundedOutput} cap, and rich outputs as files to write under {@code out/}, named
 * when they arrive and written in one batch when the cell is over. The rules of every interpreter engine
 * ({@link CellOutput}): images and PDF are saved from every result; HTML, Markdown, LaTeX and JSON only from an
 * explicit display (the cell's value has its text in the output); a display whose forms were saved shows a line
 * naming the files instead of its text.
 */
final class InterpreterCell {

    /** Names a rich output's file: {@code out/display_<n>.<ext>}, never an existing one. */
    @FunctionalInterface
    interface Names {
        String next(String extension);
    }

    /** The result fields of E2B's {@code Result} and the MIME types they carry. */
    private static final Map<String, String> FIELDS = new LinkedHashMap<>();

    static {
        FIELDS.put("png", "image/png");
        FIELDS.put("jpeg", "image/jpeg");
        FIELDS.put("svg", "image/svg+xml");
        FIELDS.put("pdf", "application/pdf");
        FIELDS.put("html", "text/html");
        FIELDS.put("markdown", "text/markdown");
        FIELDS.put("latex", "text/latex");
        FIELDS.put("json", "application/json");
    }

    /** A cell saves at most this many rich outputs. */
    static final int MAX_FILES = 100;

    private final CellOutput out;
    private final Names names;
    private final List<PutFile> files = new ArrayList<>();
    private int dropped;
    private String errorName;

    InterpreterCell(int maxOutputBytes, Names names) {
        this.out = new CellOutput(maxOutputBytes);
        this.names = names;
    }

    /** Takes one item of the cell's answer. */
    void accept(JsonNode item) {
        switch (item.path("type").asText("")) {
            case "stdout", "stderr" -> out.text(item.path("text").asText(""));
            case "result" -> result(item, item.path("is_main_result").asBoolean(false));
            case "error" -> {
                if (errorName == null) {
                    errorName = item.path("name").asText("Error");
                }
                String tb = CellOutput.stripAnsi(item.path("traceback").asText(""));
                out.block(tb.isBlank() ? item.path("name").asText("Error") + ": " + item.path("value").asText("") : tb);
            }
            default -> {
                // number_of_executions, and item types of later versions: nothing for the output.
            }
        }
    }

    private void result(JsonNode item, boolean isValue) {
        Map<String, JsonNode> forms = new LinkedHashMap<>();
        FIELDS.forEach((field, mime) -> {
            JsonNode v = item.get(field);
            if (v != null && !v.isNull()) {
                forms.put(mime, v);
            }
        });
        JsonNode extra = item.get("extra");
        if (extra != null && extra.isObject()) {
            for (Map.Entry<String, JsonNode> e : extra.properties()) {
                forms.putIfAbsent(e.getKey(), e.getValue());
            }
        }
        List<String> saved = new ArrayList<>();
        for (Map.Entry<String, JsonNode> f : forms.entrySet()) {
            String mime = f.getKey();
            String ext = CellOutput.savedExtension(mime, isValue);
            if (ext == null) {
                continue;
            }
            byte[] bytes = decode(mime, f.getValue());
            if (bytes == null) {
                continue;
            }
            if (files.size() >= MAX_FILES) {
                dropped++;
                continue;
            }
            String path = names.next(ext);
            files.add(PutFile.of(path, bytes));
            saved.add(CellOutput.savedLine(path, mime, bytes.length));
        }
        out.display(item.hasNonNull("text") ? item.get("text").asText() : null, isValue, saved);
    }

    private static byte[] decode(String mime, JsonNode value) {
        if (mime.equals("application/json")) {
            try {
                return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(value);
            } catch (IOException e) {
                return null;
            }
        }
        if (!value.isTextual()) {
            return null;
        }
        return CellOutput.formBytes(mime, value.asText());
    }

    /** Appends a note of this engine's own, on a line of its own. */
    void note(String line) {
        out.block(line);
    }

    /** The rich outputs to write, named. */
    List<PutFile> files() {
        return List.copyOf(files);
    }

    /** Rich outputs not saved because the cell had {@link #MAX_FILES} already. */
    int dropped() {
        return dropped;
    }

    /** The exception's name when the cell raised, else null. */
    String errorName() {
        return errorName;
    }

    boolean truncated() {
        return out.truncated();
    }

    String text() {
        return out.text();
    }
}
