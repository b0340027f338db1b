package dev.codeexec.langchain4j;

import dev.codeexec.FileRef;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
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
        if (BinaryContent.isBinary(content, f.mimeType())) {
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
}
