package dev.codeexec.langchain4j;

import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code workspace_restore}: restores a snapshot of this conversation into its workspace (every content checked
 * against the manifest before anything is written; files the snapshot does not hold are kept) and answers with the
 * receipt: what the engine now shows compared with the manifest, and what a snapshot never carries.
 */
final class RestoreTool implements ToolHandler {

    private final ToolSnapshots snapshots;

    RestoreTool(ToolSnapshots snapshots) {
        this.snapshots = snapshots;
    }

    /** The version the model asked for, or null for the latest. */
    static Integer version(ToolArguments args) {
        Long v = args.integer("version");
        if (v != null && (v < 1 || v > Integer.MAX_VALUE)) {
            throw new InvalidArgument("'version' must be 1 or more, got " + v);
        }
        return v == null ? null : v.intValue();
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String name = SnapshotTool.name(args);
        Integer version = version(args);
        var store = snapshots.of(call.engine(), call.key());
        return ToolWork.changing(ws -> {
            RestoreReceipt r;
            try {
                r = store.restore(call.engine(), ws, name, version, snapshots.options(), true);
            } catch (ArtifactNotFoundException e) {
                throw new ToolRefusal(ToolErrorKind.NOT_FOUND, e.getMessage() + ". Nothing was restored; take one "
                        + "with workspace_snapshot first.");
            }
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("snapshot", r.snapshot());
            attrs.put("path", ".");
            attrs.put("files", r.filesRestored());
            attrs.put("size_bytes", r.bytesRestored());
            attrs.put("clean", r.clean());
            attrs.put("differences", r.differences().size());
            return ToolResult.ok(r.summary(), attrs);
        });
    }
}
