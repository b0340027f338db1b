package dev.codeexec.workspace;

import dev.codeexec.engine.FileChange;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileChanges;
import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The core's {@link FileChangeTracker} ({@link StandardWorkspaceFS#trackChanges}): an index of every file and directory
 * below the folders (path, size, modification time), as the listing rules of {@link WorkspaceWalk} report them, kept
 * up to date look by look.
 *
 * <p><b>With a {@link ChangeFeed}</b> a look re-reads only the paths the feed names (a created or deleted directory
 * with what is below it), so its cost is what changed, not the size of the tree. A file the feed names that existed
 * before and still does is reported modified even when its size and time are the same (a rewrite within the clock's
 * granularity). When the feed lost track, the look reads the folders whole, once. The index holds at most
 * {@link StandardWorkspaceFS#MAX_TRACKED_ENTRIES} entries.
 *
 * <p><b>Without a feed</b> every look walks the folders, at most {@link StandardWorkspaceFS#MAX_COMPARED_ENTRIES}
 * entries, and compares sizes and modification times: a rewrite that keeps both is not seen.
 *
 * <p>Past its limit a tracker keeps nothing and reports that nothing was compared. It walks again every
 * {@value #RETRY_LOOKS} looks (with a feed, only once something was deleted), so a tree that stays too big is not
 * walked on every call.
 */
final class WorkspaceChangeTracker implements FileChangeTracker {

    /** Looks between two attempts to index a tree that was too big (with a feed: once something was deleted). */
    static final int RETRY_LOOKS = 16;

    /** What the index keeps of an entry; directories are kept for the tree's structure and never reported. */
    private record Entry(boolean directory, long size, long modifiedNanos) {
    }

    private final Workspace ws;
    private final Function<Workspace, WorkspaceFiles> files;
    private final Function<Workspace, PathAccess> access;
    /** The folders as resolved when tracking started (a folder that is a link inside the workspace is followed). */
    private final List<String> folders;
    private ChangeFeed.Watch watch;
    /** Most entries followed without a feed. */
    private final int comparedLimit;
    private int limit;
    /** Every visible entry below the folders, the folders included; null when they held more than the limit. */
    private TreeMap<String, Entry> index;
    private boolean deletedSinceTooBig;
    private int looksUntilRetry;
    private boolean closed;

    WorkspaceChangeTracker(Workspace ws, Function<Workspace, WorkspaceFiles> files,
                           Function<Workspace, PathAccess> access, List<String> folders, ChangeFeed feed,
                           int trackedLimit, int comparedLimit) {
        this.ws = ws;
        this.files = files;
        this.access = access;
        WorkspaceFiles f = files.apply(ws);
        Set<String> resolved = new LinkedHashSet<>();
        for (String folder : folders) {
            try {
                resolved.add(f.resolve(folder));
            } catch (InvalidSpecException e) {
                // A folder that leads outside the workspace holds nothing to track.
            }
        }
        this.folders = List.copyOf(resolved);
        // The watch starts before the first walk, so that nothing changed during the walk goes unnoticed.
        this.watch = feed == null ? null : feed.watch(ws, this.folders);
        this.comparedLimit = comparedLimit;
        this.limit = watch == null ? comparedLimit : trackedLimit;
        try {
            this.index = readAll(new WorkspaceWalk(f, access.apply(ws)));
        } catch (RuntimeException e) {
            if (watch != null) {
                watch.close();
            }
            throw e;
        }
        if (index == null) {
            looksUntilRetry = RETRY_LOOKS;
        }
    }

    @Override
    public synchronized FileChanges changes() {
        if (closed) {
            throw new IllegalStateException("the change tracker is closed");
        }
        WorkspaceFiles f = files.apply(ws);
        WorkspaceWalk walk = new WorkspaceWalk(f, access.apply(ws));
        if (watch != null) {
            ChangeFeed.Notices n = watch.poll();
            if (n == null) {
                // The feed stopped (a system limit): walk within the smaller bound from now on.
                watch = null;
                limit = comparedLimit;
                index = index != null && index.size() <= limit ? index : null;
            } else if (n.complete() && index != null) {
                return incremental(walk, n.paths());
            } else if (n.complete()) {
                deletedSinceTooBig |= n.deletions();
                if (!deletedSinceTooBig || --looksUntilRetry > 0) {
                    return FileChanges.notCompared(limit);
                }
            }
        } else if (index == null && --looksUntilRetry > 0) {
            // Too big at the last walk: walking the same bound again on every look would only say so again.
            return FileChanges.notCompared(limit);
        }
        return full(walk);
    }

    /**
     * Compares the index with what a run listed when it ended, under the rules of {@link WorkspaceWalk}; looks itself
     * when it has a feed (cheaper and finer), when the snapshot is of other folders (a folder that is a link, one that
     * leads outside), when a folder is no longer a directory, or when the snapshot was cut at its bound.
     */
    @Override
    public synchronized FileChanges changes(FolderSnapshot afterRun) {
        if (closed) {
            throw new IllegalStateException("the change tracker is closed");
        }
        if (afterRun == null || watch != null || !afterRun.folders().equals(folders)) {
            return changes();
        }
        TreeMap<String, Entry> after = afterRun.complete() ? fromSnapshot(afterRun) : null;
        if (after == null) {
            return changes(); // cut at the run's bound, which may be below this tracker's: a look decides
        }
        TreeMap<String, Entry> before = index;
        index = after == null || after.size() > limit ? null : after;
        if (index == null) {
            deletedSinceTooBig = false;
            looksUntilRetry = RETRY_LOOKS;
        }
        if (before == null || index == null) {
            return FileChanges.notCompared(limit);
        }
        List<FileChange> changes = new ArrayList<>();
        compare(before, index, null, changes);
        changes.sort(Comparator.comparing(FileChange::path));
        return new FileChanges(changes, true, limit);
    }

    /**
     * The index a walk of the folders would build from the snapshot's entries: hidden temporary names and denied paths
     * left out (a denied directory with all it holds), links counted only as the regular file they lead to inside the
     * workspace (read from the file system: a snapshot does not follow them), special files left out. Null when a
     * folder is there but is not a directory, or an entry is not below a folder.
     */
    private TreeMap<String, Entry> fromSnapshot(FolderSnapshot s) {
        PathAccess a = access.apply(ws);
        WorkspaceWalk walk = null;
        TreeMap<String, Entry> m = new TreeMap<>();
        Set<String> present = new HashSet<>();
        for (FolderSnapshot.Entry e : s.entries()) {
            String folder = folderOf(e.path());
            if (folder == null) {
                return null;
            }
            if (e.path().equals(folder)) {
                if (e.kind() != FolderSnapshot.Kind.DIRECTORY) {
                    return null;
                }
                present.add(folder);
            }
            if (!visibleBelow(a, folder, e)) {
                continue;
            }
            switch (e.kind()) {
                case DIRECTORY -> m.put(e.path(), new Entry(true, 0, nanos(e.modified())));
                case FILE -> m.put(e.path(), new Entry(false, e.sizeBytes(), nanos(e.modified())));
                case LINK -> {
                    walk = walk == null ? new WorkspaceWalk(files.apply(ws), a) : walk;
                    FileEntry target = walk.visible(e.path());
                    if (target != null && !target.isDirectory()) {
                        m.put(e.path(), entry(target));
                    }
                }
                default -> {
                }
            }
        }
        // Entries below a folder the snapshot does not show as a directory cannot be placed.
        for (String p : m.keySet()) {
            if (!present.contains(folderOf(p))) {
                return null;
            }
        }
        return m;
    }

    /** The tracked folder at or above {@code path}, or null. */
    private String folderOf(String path) {
        for (String f : folders) {
            if (path.equals(f) || path.startsWith(f + "/")) {
                return f;
            }
        }
        return null;
    }

    /** Whether a walk of {@code folder} would report the entry: no hidden name, nothing denied on the way. */
    private static boolean visibleBelow(PathAccess a, String folder, FolderSnapshot.Entry e) {
        String path = e.path();
        String name = path.substring(path.lastIndexOf('/') + 1);
        if (e.kind() != FolderSnapshot.Kind.DIRECTORY && name.startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX)) {
            return false;
        }
        for (String p = path; p.length() >= folder.length(); p = WorkspaceWalk.parentOf(p)) {
            String n = p.substring(p.lastIndexOf('/') + 1);
            if ((p.length() > folder.length() && n.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX)) || !a.canRead(p)) {
                return false;
            }
            if (p.length() == folder.length()) {
                break;
            }
        }
        return true;
    }

    /** Reads the folders whole and compares with the index. */
    private FileChanges full(WorkspaceWalk walk) {
        TreeMap<String, Entry> before = index;
        index = readAll(walk);
        if (index == null) {
            deletedSinceTooBig = false;
            looksUntilRetry = RETRY_LOOKS;
        }
        if (before == null || index == null) {
            return FileChanges.notCompared(limit);
        }
        List<FileChange> changes = new ArrayList<>();
        compare(before, index, null, changes);
        changes.sort(Comparator.comparing(FileChange::path));
        return new FileChanges(changes, true, limit);
    }

    /** Re-reads the paths the feed named and compares each with what the index held there. */
    private FileChanges incremental(WorkspaceWalk walk, Map<String, Boolean> notices) {
        List<FileChange> changes = new ArrayList<>();
        Set<String> readWhole = new HashSet<>();
        for (Map.Entry<String, Boolean> n : new TreeMap<>(notices).entrySet()) {
            String p = n.getKey();
            if (!tracked(p) || readAbove(readWhole, p)) {
                continue; // outside the folders, or read already with what is above it
            }
            Entry old = index.get(p);
            FileEntry now = walk.visible(p);
            if (!n.getValue() && old != null && old.directory() && now != null && now.isDirectory()) {
                index.put(p, entry(now)); // only the directory's own attributes changed
                continue;
            }
            SortedMap<String, Entry> oldBelow = index.subMap(p + "/", p + "0"); // '0' follows '/'
            TreeMap<String, Entry> before = new TreeMap<>(oldBelow);
            if (old != null) {
                before.put(p, old);
            }
            TreeMap<String, Entry> after = read(walk, p, now, index.size() - before.size());
            if (after == null) {
                index = null;
                looksUntilRetry = RETRY_LOOKS;
                deletedSinceTooBig = false;
                return FileChanges.notCompared(limit);
            }
            compare(before, after, p, changes);
            oldBelow.clear();
            index.remove(p);
            index.putAll(after);
            readWhole.add(p);
        }
        changes.sort(Comparator.comparing(FileChange::path));
        return new FileChanges(changes, true, limit);
    }

    /**
     * Adds to {@code changes} the files created, modified and deleted between two states of a part of the tree. A file
     * at {@code touched} (the path a feed named) that exists in both is modified whatever its size and time.
     */
    private static void compare(Map<String, Entry> before, Map<String, Entry> after, String touched,
                                List<FileChange> changes) {
        for (Map.Entry<String, Entry> e : after.entrySet()) {
            Entry now = e.getValue();
            if (now.directory()) {
                continue;
            }
            Entry old = before.get(e.getKey());
            if (old == null || old.directory()) {
                changes.add(new FileChange(e.getKey(), FileChange.Kind.CREATED, now.size()));
            } else if (e.getKey().equals(touched) || old.size() != now.size()
                    || old.modifiedNanos() != now.modifiedNanos()) {
                changes.add(new FileChange(e.getKey(), FileChange.Kind.MODIFIED, now.size()));
            }
        }
        for (Map.Entry<String, Entry> e : before.entrySet()) {
            if (e.getValue().directory()) {
                continue;
            }
            Entry now = after.get(e.getKey());
            if (now == null || now.directory()) {
                changes.add(new FileChange(e.getKey(), FileChange.Kind.DELETED, 0));
            }
        }
    }

    /** Every visible entry below the folders, or null when they hold more than the limit. */
    private TreeMap<String, Entry> readAll(WorkspaceWalk walk) {
        TreeMap<String, Entry> all = new TreeMap<>();
        for (String folder : folders) {
            TreeMap<String, Entry> part = read(walk, folder, walk.visible(folder), all.size());
            if (part == null) {
                return null;
            }
            all.putAll(part);
        }
        return all;
    }

    /**
     * The entries at and below {@code path} ({@code now} is what is there), or null when they would take the index
     * past its limit, given {@code others} entries elsewhere.
     */
    private TreeMap<String, Entry> read(WorkspaceWalk walk, String path, FileEntry now, int others) {
        TreeMap<String, Entry> m = new TreeMap<>();
        if (now == null) {
            return m;
        }
        m.put(path, entry(now));
        if (now.isDirectory()) {
            int room = limit - others;
            boolean complete = walk.walk(path, true, 0, Set.of(), 2 * limit, e -> {
                m.put(e.path(), entry(e));
                return m.size() <= room;
            });
            if (!complete) {
                return null;
            }
        }
        return m.size() + others > limit ? null : m;
    }

    /** True when a path above {@code path} was read with everything below it in this look. */
    private static boolean readAbove(Set<String> readWhole, String path) {
        for (String p = WorkspaceWalk.parentOf(path); !p.equals("."); p = WorkspaceWalk.parentOf(p)) {
            if (readWhole.contains(p)) {
                return true;
            }
        }
        return false;
    }

    private boolean tracked(String path) {
        for (String f : folders) {
            if (f.equals(".") || path.equals(f) || path.startsWith(f + "/")) {
                return true;
            }
        }
        return false;
    }

    private static Entry entry(FileEntry e) {
        return new Entry(e.isDirectory(), e.isDirectory() ? 0 : e.size(), nanos(e.modifiedTime()));
    }

    private static long nanos(Instant t) {
        long s = t.getEpochSecond();
        if (s > Long.MAX_VALUE / 1_000_000_000L - 1 || s < Long.MIN_VALUE / 1_000_000_000L + 1) {
            return s; // beyond the year 2262: seconds are precise enough
        }
        return s * 1_000_000_000L + t.getNano();
    }

    @Override
    public synchronized int trackedEntries() {
        return index == null ? 0 : index.size();
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            index = null;
            if (watch != null) {
                watch.close();
                watch = null;
            }
        }
    }
}
