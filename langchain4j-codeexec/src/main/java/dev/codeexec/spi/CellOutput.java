package dev.codeexec.spi;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The text of one interpreter cell as its outputs arrive, under one {@link BoundedOutput} cap, and the rules for its
 * rich outputs, shared by the engines of the {@link InterpreterEngine} family so that a cell reads the same on each.
 *
 * <p>Text: streams are written as they come ({@link #text(String)}); values, displays, tracebacks and the engine's own
 * notes stand on lines of their own ({@link #block(String)}). Rich outputs: images ({@code image/png},
 * {@code image/jpeg}, {@code image/gif}, {@code image/webp}, {@code image/svg+xml}) and PDF are saved as files from
 * every display and from a cell's value; HTML, Markdown, LaTeX and JSON only from an explicit display (a cell's value
 * has its plain text in the output, and a data frame's HTML would be a file per cell) ({@link #savedExtension}). A
 * display whose forms were saved shows a line naming the files instead of its plain text ({@link #display}).
 *
 * <p>Not thread-safe: one thread collects a cell.
 */
public final class CellOutput {

    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;?]*[ -/]*[@-~]|\u001B[@-Z\\\\-_]");

    /** MIME type to file extension, for the types that are saved. */
    private static final Map<String, String> EXTENSIONS = Map.ofEntries(
            Map.entry("image/png", "png"), Map.entry("image/jpeg", "jpg"), Map.entry("image/gif", "gif"),
            Map.entry("image/webp", "webp"), Map.entry("image/svg+xml", "svg"), Map.entry("application/pdf", "pdf"),
            Map.entry("text/html", "html"), Map.entry("text/markdown", "md"), Map.entry("text/latex", "tex"),
            Map.entry("application/json", "json"));

    private final BoundedOutput out;
    private boolean atLineStart = true;

    /** @param maxOutputBytes the cap of the cell's text */
    public CellOutput(int maxOutputBytes) {
        this.out = new BoundedOutput(maxOutputBytes);
    }

    /** Appends text as it came (a stream's). */
    public void text(String s) {
        if (s.isEmpty()) {
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
        atLineStart = s.endsWith("\n");
    }

    /** Appends text on lines of its own: after a line break when the text so far does not end with one. */
    public void block(String s) {
        if (!atLineStart) {
            text("\n");
        }
        text(s.endsWith("\n") ? s : s + "\n");
    }

    /**
     * Appends a display or a cell's value: its plain text (if any) when it is the value or none of its forms was
     * saved, then a line {@code [display saved as <line>]} for each saved form.
     *
     * @param saved the saved forms, each described by {@link #savedLine}
     */
    public void display(String plain, boolean isValue, List<String> saved) {
        if ((isValue || saved.isEmpty()) && plain != null) {
            block(plain);
        }
        for (String s : saved) {
            block("[display saved as " + s + "]");
        }
    }

    /** True when the text reached the cap. */
    public boolean truncated() {
        return out.truncated();
    }

    /** The text so far, with a truncation marker when the cap was reached. */
    public String text() {
        return out.text();
    }

    /** The text without ANSI escape sequences (tracebacks are coloured). */
    public static String stripAnsi(String s) {
        return ANSI.matcher(s).replaceAll("");
    }

    /**
     * The extension a form of this MIME type is saved with, or null when it is not saved: images and PDF from every
     * display and value, HTML, Markdown, LaTeX and JSON from displays only ({@code isValue} false).
     */
    public static String savedExtension(String mime, boolean isValue) {
        String ext = EXTENSIONS.get(mime);
        boolean picture = mime.startsWith("image/") || mime.equals("application/pdf");
        return ext == null || isValue && !picture ? null : ext;
    }

    /**
     * The bytes of a form given as text: UTF-8 for SVG and text types, base64 for the others (the MIME decoder skips
     * the line breaks some kernels put into long base64 strings). Null when the base64 is broken. JSON forms are
     * the JSON itself, which the caller writes.
     */
    public static byte[] formBytes(String mime, String text) {
        if (mime.equals("image/svg+xml") || mime.startsWith("text/")) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        try {
            return Base64.getMimeDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** How a saved form is named in the output: {@code <path> (<mime>, <n> bytes)}. */
    public static String savedLine(String path, String mime, int length) {
        return path + " (" + mime + ", " + length + " bytes)";
    }
}
