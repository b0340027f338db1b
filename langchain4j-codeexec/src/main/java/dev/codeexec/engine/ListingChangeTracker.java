package dev.codeexec.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The default {@link FileChangeTracker} of {@link WorkspaceFS#trackChanges}: a bounded listing of the folders per look,
 * compared by size with the previous one. For file systems that offer nothing better.
 */
final class ListingChangeTracker implements FileChangeTracker {

    /** {@value}: the most entries one look lists; above it nothing is compared. */
    static final int LIMIT = 5_000;

    private final WorkspaceFS fs;
    private final Workspace ws;
    private final List<String> folders;
    /** File path to size at the previous look; null when it held too many entries or the tracker is closed. */
    private Map<String, Long> last;
    private boolean closed;

    ListingChangeTracker(WorkspaceFS fs, Workspace ws, List<String> folders) {
        this.fs = fs;
        this.ws = ws;
        this.folders = List.copyOf(folders);
        this.last = look();
    }

    @Override
    public synchronized FileChanges changes() {
        if (closed) {
            throw new IllegalStateException("the change tracker is closed");
        }
        Map<String, Long> before = last;
        Map<String, Long> after = look();
        last = after;
        if (before == null || after == null) {
            return FileChanges.notCompared(LIMIT);
        }
        List<FileChange> changes = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            Long old = before.get(e.getKey());
            if (old == null) {
                changes.add(new FileChange(e.getKey(), FileChange.Kind.CREATED, e.getValue()));
            } else if (!old.equals(e.getValue())) {
                changes.add(new FileChange(e.getKey(), FileChange.Kind.MODIFIED, e.getValue()));
            }
        }
        for (String path : before.keySet()) {
            if (!after.containsKey(path)) {
                changes.add(new FileChange(path, FileChange.Kind.DELETED, 0));
            }
        }
        changes.sort(Comparator.comparing(FileChange::path));
        return new FileChanges(changes, true, LIMIT);
    }

    /** The files below the folders with their sizes, or null when they hold more than {@link #LIMIT} entries. */
    /** True when something is at {@code folder}; a folder that leads outside the workspace holds nothing to follow. */
    private boolean exists(String folder) {
        try {
            return fs.stat(ws, folder).isPresent();
        } catch (PathEscapeException e) {
            return false;
        }
    }

    private Map<String, Long> look() {
        Map<String, Long> files = new HashMap<>();
        int entries = 0;
        for (String folder : folders) {
            if (!exists(folder)) {
                continue; // nothing in it
            }
            FileListing l;
            try {
                l = fs.list(ws, folder, ListOptions.maxEntries(LIMIT - entries + 1));
            } catch (InvalidSpecException e) {
                continue; // removed since the stat: nothing in it
            }
            entries += l.entries().size();
            if (!l.complete() || entries > LIMIT) {
                return null;
            }
            for (FileInfo f : l.entries()) {
                if (!f.directory()) {
                    files.put(f.path(), f.sizeBytes());
                }
            }
        }
        return files;
    }

    @Override
    public synchronized int trackedEntries() {
        return last == null ? 0 : last.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
        last = null;
    }
}
