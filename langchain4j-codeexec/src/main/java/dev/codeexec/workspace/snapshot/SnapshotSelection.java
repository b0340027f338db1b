package dev.codeexec.workspace.snapshot;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceGlob;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The entries a snapshot takes from a workspace: everything below the roots, and what the globs match elsewhere, seen
 * through the engine's {@link WorkspaceFS#entries} (links and special files as such, never followed), without
 * {@code runs/} unless asked, within the bounds. Capture and the receipt's check use the same selection, so that what
 * the check calls "extra" is what a new capture would have taken.
 */
final class SnapshotSelection {

    /** Entries by path, sorted. */
    private final SortedMap<String, WorkspaceEntry> entries = new TreeMap<>();
    private final int maxFiles;
    private final long maxBytes;
    private final boolean throwOnLimit;
    private int files;
    private int others;
    private long bytes;
    private boolean complete = true;

    private SnapshotSelection(int maxFiles, long maxBytes, boolean throwOnLimit) {
        this.maxFiles = maxFiles;
        this.maxBytes = maxBytes;
        this.throwOnLimit = throwOnLimit;
    }

    /**
     * Selects the entries.
     *
     * @param throwOnLimit throw {@link SnapshotLimitException} at a bound (capture), or stop and report the selection
     *                     incomplete (the receipt's check)
     */
    static SnapshotSelection select(WorkspaceFS fs, Workspace ws, List<String> roots, List<String> globs,
                                    boolean includeRuns, int maxFiles, long maxBytes, boolean throwOnLimit) {
        SnapshotSelection s = new SnapshotSelection(maxFiles, maxBytes, throwOnLimit);
        for (String root : roots) {
            String r = PathResolver.normalize(root);
            if (s.complete && !fs.entries(ws, r, e -> s.add(e, includeRuns))) {
                s.complete = false;
            }
        }
        for (String g : globs) {
            WorkspaceGlob glob = WorkspaceGlob.compile(g);
            String base = glob.base();
            if (!WorkspaceGlob.isGlob(glob.pattern())) {
                // A plain path: walk its parent to see the entry itself, not what a link there leads to.
                int slash = base.lastIndexOf('/');
                base = slash < 0 ? "." : base.substring(0, slash);
            }
            if (s.complete && !fs.entries(ws, base, e -> !glob.matches(e.path()) || s.add(e, includeRuns))) {
                s.complete = false;
            }
        }
        return s;
    }

    /** Takes one entry; false when a bound stops the walk. */
    private boolean add(WorkspaceEntry e, boolean includeRuns) {
        String p = e.path();
        if (!includeRuns && (p.equals(WorkspaceLayout.RUNS) || p.startsWith(WorkspaceLayout.RUNS + "/"))) {
            return true;
        }
        if (entries.containsKey(p)) {
            return true;
        }
        if (e.kind() == WorkspaceEntry.Kind.FILE) {
            if (files + 1 > maxFiles) {
                return limit(SnapshotLimitException.Bound.MAX_FILES, maxFiles, files + 1L);
            }
            if (bytes + e.sizeBytes() > maxBytes) {
                return limit(SnapshotLimitException.Bound.MAX_TOTAL_BYTES, maxBytes, bytes + e.sizeBytes());
            }
            files++;
            bytes += e.sizeBytes();
        } else {
            if (others + 1 > maxFiles) {
                return limit(SnapshotLimitException.Bound.MAX_ENTRIES, maxFiles, others + 1L);
            }
            others++;
        }
        entries.put(p, e);
        return true;
    }

    private boolean limit(SnapshotLimitException.Bound bound, long limit, long size) {
        if (throwOnLimit) {
            throw new SnapshotLimitException(bound, limit, size);
        }
        complete = false;
        return false;
    }

    SortedMap<String, WorkspaceEntry> entries() {
        return entries;
    }

    /** False when a bound stopped the selection (only when not throwing) or a walk was cut. */
    boolean complete() {
        return complete;
    }

    /** The paths of the regular files, sorted. */
    List<String> filePaths() {
        return entries.values().stream().filter(e -> e.kind() == WorkspaceEntry.Kind.FILE)
                .map(WorkspaceEntry::path).toList();
    }
}
