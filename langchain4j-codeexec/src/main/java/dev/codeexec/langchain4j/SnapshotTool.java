package dev.codeexec.langchain4j;

import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code workspace_snapshot}: captures the conversation's workspace ({@code work/}, {@code out/}, {@code home/}, and
 * {@code runs/} when asked) as the next version of a named snapshot in the artifact store, and answers with its
 * name@version, file count and bytes, what was skipped and what a snapshot never carries.
 */
final class SnapshotTool implements ToolHandler {

    /** The snapshot name when the model gives none. */
    static final String DEFAULT_NAME = "workspace";

    private final ToolSnapshots snapshots;

    SnapshotTool(ToolSnapshots snapshots) {
        this.snapshots = snapshots;
    }

    /** The model's name, or the default; checked by the store's rules when used. */
    static String name(ToolArguments args) {
        String n = args.string("name");
        n = n == null || n.isBlank() ? DEFAULT_NAME : n.strip();
        if (!n.matches("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*") || n.length() > 100 || n.contains("..")) {
            throw new InvalidArgument("'name' must be letters, digits, '.', '_' or '-' such as 'before-cleanup', got "
                    + ToolArguments.echo(n));
        }
        return n;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String name = name(args);
        SnapshotOptions options = Boolean.TRUE.equals(args.bool("include_runs"))
                ? snapshots.options().toBuilder().includeRuns(true).build() : snapshots.options();
        var store = snapshots.of(call.engine(), call.key());
        return ToolWork.reading(ws -> {
            Snapshot s = store.capture(call.engine(), ws, name, options);
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("snapshot", s.label());
            attrs.put("name", s.name());
            attrs.put("version", s.version());
            attrs.put("files", s.manifest().fileCount());
            attrs.put("size_bytes", s.manifest().totalBytes());
            attrs.put("skipped", s.manifest().skipped().size());
            StringBuilder text = new StringBuilder("saved snapshot ").append(s.label()).append(": ")
                    .append(s.manifest().fileCount()).append(" files, ").append(s.manifest().totalBytes())
                    .append(" bytes from ")
                    .append(String.join(", ", options.walkedRoots())).append('.');
            if (!s.manifest().skipped().isEmpty()) {
                text.append(" Skipped ").append(s.manifest().skipped().size())
                        .append(" links or special files (never followed).");
            }
            text.append(" Restore it with workspace_restore name=").append(s.name()).append(" version=")
                    .append(s.version()).append(". Not carried: ").append(String.join("; ",
                            RestoreReceipt.NOT_CARRIED)).append('.');
            return ToolResult.ok(text.toString(), attrs);
        });
    }
}
