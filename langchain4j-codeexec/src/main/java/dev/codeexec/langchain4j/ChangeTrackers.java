package dev.codeexec.langchain4j;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileChanges;
import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.Workspace;
import dev.codeexec.workspace.StandardWorkspaceFS;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The change tracker of each conversation workspace ({@link dev.codeexec.engine.WorkspaceFS#trackChanges} on
 * {@code work/} and {@code out/}), so that every run reports the files it changed ({@link ChangedFiles}) at the cost of
 * what changed rather than of the size of the tree, where the engine's file system allows it.
 *
 * <p>A tracker is created at a workspace's first run and looked at around each run: before it, to take in what
 * changed since the last run (unless nothing can have: the last call was a run, no call that may write came between,
 * no background session of the conversation runs), and after it, for the report. Where the engine's runner lists
 * the folders at the end of the run itself ({@link dev.codeexec.engine.ListingProgramRunner}), the look after it is
 * that listing, compared by the tracker without a request of its own; without one (the run timed out, the listing
 * failed) the tracker looks. Every tool call that may change
 * files, and every {@link WorkspaceIO} use, marks the workspace {@linkplain #mayHaveChanged changed}.
 *
 * <p>Memory: trackers are closed when their workspace is closed or reaped, and when the runtime closes. At most
 * {@value #MAX_TRACKERS} are kept, holding at most {@value #MAX_ENTRIES_IN_ALL} entries together; past that the
 * least recently used are closed (their workspace gets a new tracker, from a fresh look, at its next run).
 */
final class ChangeTrackers implements AutoCloseable {

    /** {@value}: most trackers kept at once. */
    static final int MAX_TRACKERS = 1024;

    /**
     * {@value}: most entries a run lists for its tracker when it ends, where the engine can
     * ({@link dev.codeexec.engine.ListingProgramRunner}): as many as a tracker's own walk visits; a listing cut there
     * makes the tracker look for itself.
     */
    static final int MAX_LISTED = 2 * StandardWorkspaceFS.MAX_COMPARED_ENTRIES;

    /** {@value}: most entries all trackers keep together (a few hundred bytes each). */
    static final long MAX_ENTRIES_IN_ALL = 500_000;

    /** A run's result and what it changed (null when not reported). */
    record Tracked<T>(T result, ChangedFiles changed) {
    }

    private record Key(Engine engine, String workspaceId) {
    }

    /** One workspace's tracker and what is known about it. Fields guarded by the enclosing instance. */
    private static final class Slot {
        final FileChangeTracker tracker;
        /** True while nothing can have changed the workspace since the tracker's last look. */
        boolean clean;
        /** True while a run uses it: not closed to make room then. */
        boolean inUse;
        /** Entries the tracker held at its last look, for the memory bound. */
        int entries;

        Slot(FileChangeTracker tracker) {
            this.tracker = tracker;
        }
    }

    private final boolean enabled;
    private final BackgroundSessions sessions;
    /** In order of use, the least recent first. */
    private final LinkedHashMap<Key, Slot> slots = new LinkedHashMap<>(16, 0.75f, true);
    private long entries;
    private boolean closed;

    /** @param enabled false when the application switched changed-file reports off: nothing is tracked */
    ChangeTrackers(boolean enabled, BackgroundSessions sessions) {
        this.enabled = enabled;
        this.sessions = sessions;
    }

    /**
     * Runs {@code run} (the caller holds the workspace lock) and reports the files it changed below {@code work/} and
     * {@code out/}. When the workspace cannot be tracked (gone, busy, an engine failure), the run goes on unreported.
     */
    <T> Tracked<T> tracking(ToolCall call, Workspace ws, Supplier<T> run) {
        if (!enabled) {
            return new Tracked<>(run.get(), null);
        }
        Key key = new Key(call.engine(), ws.id());
        Slot slot = acquire(key, call.engine(), ws);
        if (slot == null) {
            return new Tracked<>(run.get(), null);
        }
        boolean clean = false;
        FolderSnapshot listing = null;
        try {
            boolean comparable = true;
            if (!slot.clean || sessions.runningFor(call.engine(), call.key()) > 0) {
                // What changed since the last run is not this run's doing: take it in first.
                comparable = look(slot, null) != null;
            }
            call.listAfterRuns(ChangedFiles.FOLDERS, MAX_LISTED);
            T result;
            try {
                result = run.get();
            } finally {
                listing = call.takeListing();
            }
            FileChanges changes = look(slot, listing);
            clean = changes != null && sessions.runningFor(call.engine(), call.key()) == 0;
            // Without the look before, this one also holds what changed before the run: not reported as the run's.
            return new Tracked<>(result, changes != null && comparable ? new ChangedFiles(changes) : null);
        } finally {
            release(key, slot, clean);
        }
    }

    /**
     * A look of the slot's tracker, or its comparison with what the run listed when it ended ({@code listing}, null
     * when it listed nothing); null when the workspace could not be read (gone, busy, the tracker closed).
     */
    private static FileChanges look(Slot slot, FolderSnapshot listing) {
        try {
            return listing == null ? slot.tracker.changes() : slot.tracker.changes(listing);
        } catch (CodeExecException | IllegalStateException e) {
            return null;
        }
    }

    /** Marks a workspace whose files may have changed outside a run. */
    void mayHaveChanged(Engine engine, Workspace ws) {
        synchronized (this) {
            Slot s = slots.get(new Key(engine, ws.id()));
            if (s != null) {
                s.clean = false;
            }
        }
    }

    /** Closes the tracker of a workspace that was closed or reaped. */
    void forget(Engine engine, Workspace ws) {
        Slot s;
        synchronized (this) {
            s = slots.remove(new Key(engine, ws.id()));
            if (s != null) {
                entries -= s.entries;
            }
        }
        if (s != null) {
            s.tracker.close();
        }
    }

    /** Trackers kept now (for tests). */
    synchronized int size() {
        return slots.size();
    }

    /** Entries all trackers held at their last look (for tests). */
    synchronized long trackedEntries() {
        return entries;
    }

    @Override
    public void close() {
        List<Slot> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(slots.values());
            slots.clear();
            entries = 0;
        }
        all.forEach(s -> s.tracker.close());
    }

    /** The workspace's slot, marked in use, with a new tracker when it has none; null when it cannot be tracked. */
    private Slot acquire(Key key, Engine engine, Workspace ws) {
        synchronized (this) {
            if (closed) {
                return null;
            }
            Slot s = slots.get(key);
            if (s != null) {
                s.inUse = true;
                return s;
            }
        }
        FileChangeTracker t;
        try {
            t = engine.fs().trackChanges(ws, ChangedFiles.FOLDERS);
        } catch (CodeExecException e) {
            return null;
        }
        Slot s = new Slot(t);
        s.clean = true; // its first look was just taken
        s.inUse = true;
        synchronized (this) {
            if (closed) {
                t.close();
                return null;
            }
            Slot old = slots.put(key, s);
            if (old != null) {
                // Two runs in one workspace cannot race here (the workspace lock); keep the newer all the same.
                entries -= old.entries;
                old.tracker.close();
            }
        }
        return s;
    }

    /** Ends a run's use of a slot and closes the least recently used trackers past the bounds. */
    private void release(Key key, Slot s, boolean clean) {
        int held = s.tracker.trackedEntries();
        List<Slot> evicted = new ArrayList<>();
        synchronized (this) {
            s.inUse = false;
            s.clean = clean;
            if (slots.get(key) == s) {
                entries += held - s.entries;
                s.entries = held;
            }
            Iterator<Map.Entry<Key, Slot>> it = slots.entrySet().iterator();
            while ((slots.size() > MAX_TRACKERS || entries > MAX_ENTRIES_IN_ALL) && it.hasNext()) {
                Slot old = it.next().getValue();
                if (!old.inUse && old != s) {
                    it.remove();
                    entries -= old.entries;
                    evicted.add(old);
                }
            }
        }
        evicted.forEach(e -> e.tracker.close());
    }
}
