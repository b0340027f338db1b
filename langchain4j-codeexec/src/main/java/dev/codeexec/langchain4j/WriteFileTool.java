package dev.codeexec.langchain4j;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
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
            byte[] existing = existing(call.engine(), ws, path, append);
            byte[] toWrite = bytes;
            if (append && existing != null) {
                toWrite = new byte[existing.length + bytes.length];
                System.arraycopy(existing, 0, toWrite, 0, existing.length);
                System.arraycopy(bytes, 0, toWrite, existing.length, bytes.length);
            }
            call.engine().fs().putFiles(ws, List.of(PutFile.of(path, toWrite)));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("size_bytes", (long) toWrite.length);
            attrs.put("files_changed", List.of(path));
            String what = existing == null ? "created" : append ? "appended " + bytes.length + " bytes to"
                    : "overwrote";
            return ToolResult.ok(what + " " + path + " (now " + toWrite.length + " bytes)", attrs);
        });
    }

    /** The file's bytes when appending to it, a marker when it exists, or null when it does not. */
    private byte[] existing(Engine engine, Workspace ws, String path, boolean append) {
        if (!append) {
            try {
                List<FileInfo> hit = engine.fs().list(ws, path);
                return hit.stream().anyMatch(f -> f.path().equals(path) && !f.directory()) ? new byte[0] : null;
            } catch (PathEscapeException e) {
                throw e;
            } catch (CodeExecException e) {
                return null;
            }
        }
        WholeFile f;
        try {
            f = WholeFile.read(engine, ws, path, settings.maxWriteBytes());
        } catch (InvalidSpecException e) {
            if (e instanceof PathEscapeException) {
                throw e;
            }
            return null;
        }
        if (f == null) {
            throw new ToolRefusal(ToolErrorKind.TOO_LARGE, "cannot append: " + path + " would exceed the limit of "
                    + settings.maxWriteBytes() + " bytes per file written by this tool. Nothing was changed; "
                    + "append with a program run by " + settings.name(WorkspaceTool.EXEC) + " instead.");
        }
        return f.content();
    }
}
