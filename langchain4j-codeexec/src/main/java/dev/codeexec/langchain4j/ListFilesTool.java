package dev.codeexec.langchain4j;

import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code workspace_list_files}: a folder (recursively) or the files matching a glob, sorted, with sizes, up to the
 * configured number of entries. The listing stops walking at that number, so its cost does not grow with the tree;
 * when it stopped, the text says that more entries exist (not how many: they were not counted) and the result has
 * {@code truncated: true}.
 *
 * <p>{@code runs/} (one folder per run) is listed as a folder only, so that the run history does not crowd out the
 * model's own files; listing {@code runs} (or a path or glob below it) shows what it holds.
 */
final class ListFilesTool implements ToolHandler {

    private final ToolSettings settings;

    ListFilesTool(ToolSettings settings) {
        this.settings = settings;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String raw = args.string("path", "glob", "pattern");
        String p = ToolPaths.normalize(raw, "path");
        ListOptions options = ListOptions.maxEntries(settings.maxListEntries()).withoutContents(WorkspaceLayout.RUNS);
        return ToolWork.reading(ws -> describe(p, call.engine().fs().list(ws, p, options)));
    }

    private ToolResult describe(String p, FileListing listing) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        int n = listing.entries().size();
        attrs.put("count", n);
        if (n == 0) {
            return ToolResult.ok("no files match " + ToolArguments.echo(p)
                    + " (inputs are in work/inputs, scratch in work, results in out)", attrs);
        }
        String where = p.equals(".") ? "the workspace root" : p;
        StringBuilder sb = new StringBuilder();
        if (listing.complete()) {
            sb.append(n).append(n == 1 ? " entry" : " entries").append(" under ").append(where).append(':');
        } else {
            sb.append("the first ").append(n).append(" entries found under ").append(where)
                    .append(" (the listing stopped there: more exist, not counted):");
        }
        boolean runsInside = p.equals(WorkspaceLayout.RUNS) || p.startsWith(WorkspaceLayout.RUNS + "/");
        for (FileInfo f : listing.entries()) {
            sb.append('\n').append(f.path());
            if (!f.directory()) {
                sb.append(" (").append(f.sizeBytes()).append(" bytes)");
            } else if (f.path().equals(WorkspaceLayout.RUNS) && !runsInside) {
                sb.append("/ (the run history, one folder per run: list runs to see it)");
            } else {
                sb.append('/');
            }
        }
        if (!listing.complete()) {
            sb.append("\n... more entries not listed (truncated: true); narrow the path or use a glob");
            attrs.put("truncated", true);
        }
        return ToolResult.ok(sb.toString(), attrs);
    }
}
