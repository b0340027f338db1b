package dev.codeexec.workspace;

import java.net.URLConnection;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/** Guesses a MIME type from a file name, then from its first bytes. */
public final class MimeTypes {

    private static final Map<String, String> BY_EXTENSION = Map.ofEntries(
            Map.entry("csv", "text/csv"), Map.entry("tsv", "text/tab-separated-values"),
            Map.entry("md", "text/markdown"), Map.entry("txt", "text/plain"), Map.entry("log", "text/plain"),
            Map.entry("json", "application/json"), Map.entry("jsonl", "application/jsonl"),
            Map.entry("py", "text/x-python"), Map.entry("sh", "text/x-shellscript"),
            Map.entry("html", "text/html"), Map.entry("htm", "text/html"), Map.entry("xml", "application/xml"),
            Map.entry("yaml", "application/yaml"), Map.entry("yml", "application/yaml"),
            Map.entry("png", "image/png"), Map.entry("jpg", "image/jpeg"), Map.entry("jpeg", "image/jpeg"),
            Map.entry("gif", "image/gif"), Map.entry("svg", "image/svg+xml"), Map.entry("webp", "image/webp"),
            Map.entry("pdf", "application/pdf"), Map.entry("zip", "application/zip"),
            Map.entry("gz", "application/gzip"), Map.entry("tar", "application/x-tar"));

    private MimeTypes() {
    }

    /** The MIME type of a file: by extension, else {@code text/plain} for UTF-8 text, else octet-stream. */
    public static String guess(String name, byte[] head) {
        int dot = name.lastIndexOf('.');
        if (dot >= 0 && dot > name.lastIndexOf('/')) {
            String t = BY_EXTENSION.get(name.substring(dot + 1).toLowerCase(Locale.ROOT));
            if (t != null) {
                return t;
            }
        }
        String byName = URLConnection.guessContentTypeFromName(name);
        if (byName != null) {
            return byName;
        }
        return head != null && isText(head) ? "text/plain" : "application/octet-stream";
    }

    /** True when the bytes decode as UTF-8 without control characters other than whitespace. */
    public static boolean isText(byte[] bytes) {
        int n = Math.min(bytes.length, 8192);
        for (int i = 0; i < n; i++) {
            int b = bytes[i] & 0xff;
            if (b == 0 || (b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' && b != 0x1b)) {
                return false;
            }
        }
        // A window may cut a multi-byte character at its end: allow up to 3 trailing bytes to be incomplete.
        for (int end = n; end >= Math.max(0, n - 3); end--) {
            if (decodes(bytes, end)) {
                return true;
            }
        }
        return false;
    }

    private static boolean decodes(byte[] bytes, int end) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, end));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
