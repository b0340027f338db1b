package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code workspace_write_file}: creates, overwrites or appends to a file, atomically, within the per-file write limit
 * (the whole file after an append).
 */
final class WriteFileTool implements ToolHandler {

    private final ToolSettings settings;

    WriteFileTool(ToolSettings settings) {
        this.settings = settings;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob");
        }
        String content = args.string("content", "text");
        if (content == null) {
            throw new InvalidArgument("'content' is required (use \"\" for an empty file)");
        }
        boolean append = Boolean.TRUE.equals(args.bool("append"));
        long size = OutputWindow.utf8Length(content);
        if (size > settings.maxWriteBytes()) {
            throw new InvalidArgument("'content' is " + size + " bytes; the limit per write is "
                    + settings.maxWriteBytes() + " bytes. Generate large files with a program run by "
                    + settings.name(WorkspaceTool.EXEC) + " instead");
        }
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        return ToolWork.changing(ws -> {
            call.engine().fs().checkWritableByPrograms(ws, path); // the rules programs obey
            boolean exists = isFile(call.engine(), ws, path);
            byte[] toWrite = bytes;
            if (append && exists) {
                byte[] existing = content(call.engine(), ws, path);
                toWrite = new byte[existing.length + bytes.length];
                System.arraycopy(existing, 0, toWrite, 0, existing.length);
                System.arraycopy(bytes, 0, toWrite, existing.length, bytes.length);
            }
            call.engine().fs().putFiles(ws, List.of(PutFile.of(path, toWrite)));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("size_bytes", (long) toWrite.length);
            attrs.put("files_changed", List.of(path));
            String what = !exists ? "created" : append ? "appended " + bytes.length + " bytes to"
                    : "overwrote";
            return ToolResult.ok(what + " " + path + " (now " + toWrite.length + " bytes)", attrs);
        });
    }

    /** True when a file (not a directory) is at {@code path}; a link out of the workspace is refused. */
    private static boolean isFile(Engine engine, Workspace ws, String path) {
        return engine.fs().stat(ws, path).filter(f -> !f.directory()).isPresent();
    }

    /** The bytes of the file appended to, within the tool's write limit. */
    private byte[] content(Engine engine, Workspace ws, String path) {
        WholeFile f = WholeFile.read(engine, ws, path, settings.maxWriteBytes());
        if (f == null) {
            throw new ToolRefusal(ToolErrorKind.TOO_LARGE, "cannot append: " + path + " would exceed the limit of "
                    + settings.maxWriteBytes() + " bytes per file written by this tool. Nothing was changed; "
                    + "append with a program run by " + settings.name(WorkspaceTool.EXEC) + " instead.");
        }
        return f.content();
    }
}
