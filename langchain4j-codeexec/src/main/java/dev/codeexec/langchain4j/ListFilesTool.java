package dev.codeexec.langchain4j;

import dev.codeexec.engine.FileInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code workspace_list_files}: a folder (recursively) or the files matching a glob, sorted, with sizes, up to the
 * configured number of entries.
 */
final class ListFilesTool implements ToolHandler {

    private final ToolSettings settings;
    private final ToolWorkspaces workspaces;

    ListFilesTool(ToolSettings settings, ToolWorkspaces workspaces) {
        this.settings = settings;
        this.workspaces = workspaces;
    }

    @Override
    public ToolResult handle(ToolCall call, ToolArguments args) {
        String raw = args.string("path", "glob", "pattern");
        String p = ToolPaths.normalize(raw, "path");
        return workspaces.inWorkspaceKeepingListing(call, ws -> {
            List<FileInfo> entries = new ArrayList<>(call.engine().fs().list(ws, p));
            entries.sort(Comparator.comparing(FileInfo::path));
            return describe(p, entries);
        });
    }

    private ToolResult describe(String p, List<FileInfo> entries) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("count", entries.size());
        if (entries.isEmpty()) {
            return ToolResult.ok("no files match " + ToolArguments.echo(p)
                    + " (inputs are in work/inputs, scratch in work, results in out)", attrs);
        }
        StringBuilder sb = new StringBuilder();
        sb.append(entries.size()).append(entries.size() == 1 ? " entry" : " entries").append(" under ")
                .append(p.equals(".") ? "the workspace root" : p).append(':');
        int shown = 0;
        for (FileInfo f : entries) {
            if (shown++ >= settings.maxListEntries()) {
                break;
            }
            sb.append('\n').append(f.path());
            sb.append(f.directory() ? "/" : " (" + f.sizeBytes() + " bytes)");
        }
        if (entries.size() > settings.maxListEntries()) {
            sb.append("\n... and ").append(entries.size() - settings.maxListEntries())
                    .append(" more (truncated: true); narrow the path or use a glob");
            attrs.put("truncated", true);
        }
        return ToolResult.ok(sb.toString(), attrs);
    }
}
