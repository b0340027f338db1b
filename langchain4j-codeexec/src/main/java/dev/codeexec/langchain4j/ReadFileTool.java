package dev.codeexec.langchain4j;

import dev.codeexec.FileRef;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * {@code workspace_read_file}: one window of a file, with its size and whether more follows. Binary files are
 * described, not dumped.
 */
final class ReadFileTool implements ToolHandler {

    private final ToolSettings settings;

    ReadFileTool(ToolSettings settings) {
        this.settings = settings;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob; use "
                    + settings.name(WorkspaceTool.LIST_FILES) + " to find files");
        }
        Long offset = args.integer("offset");
        if (offset != null && offset < 0) {
            throw new InvalidArgument("'offset' (" + offset + ") must be 0 or more");
        }
        Long max = args.integer("max_bytes", "limit", "length");
        if (max != null && (max < 1 || max > settings.maxReadBytes())) {
            throw new InvalidArgument("'max_bytes' (" + max + ") must be between 1 and " + settings.maxReadBytes());
        }
        long off = offset == null ? 0 : offset;
        int maxBytes = max == null ? settings.defaultReadBytes() : max.intValue();
        return ToolWork.reading(ws -> {
            FileRef f = call.engine().fs().readFile(ws, path, off, maxBytes);
            return describe(path, off, f);
        });
    }

    private ToolResult describe(String path, long off, FileRef f) {
        byte[] content = f.content() == null ? new byte[0] : f.content();
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("path", path);
        attrs.put("size_bytes", f.sizeBytes());
        StringBuilder sb = new StringBuilder();
        sb.append("path: ").append(path).append(" | size: ").append(f.sizeBytes()).append(" bytes");
        if (isBinary(content, f.mimeType())) {
            attrs.put("binary", true);
            sb.append(" | type: ").append(f.mimeType()).append(" | binary: not shown. Inspect it with ")
                    .append(settings.name(WorkspaceTool.EXEC))
                    .append(" (for example: file ").append(path).append("; xxd -l 256 ").append(path)
                    .append(") or a python script.");
            return ToolResult.ok(sb.toString(), attrs);
        }
        long end = off + content.length;
        boolean more = f.truncated() || end < f.sizeBytes();
        attrs.put("truncated", more);
        if (off >= f.sizeBytes() && f.sizeBytes() > 0) {
            sb.append(" | offset ").append(off).append(" is at or past the end of the file");
            return ToolResult.ok(sb.toString(), attrs);
        }
        sb.append(" | bytes ").append(off).append("-").append(Math.max(off, end - 1))
                .append(" | truncated: ").append(more);
        if (more) {
            sb.append(" (more follows; call again with offset=").append(end).append(")");
        }
        sb.append("\n").append(new String(content, StandardCharsets.UTF_8));
        return ToolResult.ok(sb.toString(), attrs);
    }

    /** Text is shown when it is valid UTF-8 without NULs and the type is not a known binary one. */
    static boolean isBinary(byte[] content, String mimeType) {
        String m = mimeType == null ? "" : mimeType.toLowerCase(Locale.ROOT);
        if (m.startsWith("image/") && !m.contains("svg") || m.startsWith("audio/") || m.startsWith("video/")
                || m.equals("application/pdf") || m.equals("application/zip") || m.equals("application/gzip")) {
            return true;
        }
        for (byte b : content) {
            if (b == 0) {
                return true;
            }
        }
        // A window may end inside a multi-byte character: ignore an incomplete sequence at the very end.
        int len = content.length;
        int back = 0;
        while (back < 3 && len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0x80) {
            back++;
        }
        if (len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0xC0) {
            len = len - back - 1;
        }
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            d.decode(ByteBuffer.wrap(content, 0, len));
            return false;
        } catch (CharacterCodingException e) {
            return true;
        }
    }
}
