package dev.codeexec.langchain4j;

import dev.codeexec.engine.Workspace;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The listings a run compares to find the files it changed ({@link ChangedFiles}), with the listing taken after the
 * last run of each workspace kept as the next run's "before" while nothing can have changed the workspace since. That
 * saves one of the two listings per run.
 *
 * <p>Every tool call that may change files, and every {@link WorkspaceIO} use, {@linkplain #forget forgets} the kept
 * listing; it is neither kept nor used while a background session of the conversation runs (session calls do not
 * take the workspace lock, so they could not drop it).
 */
final class RunListings {

    private static final int MAX_REMEMBERED = 1024;

    private final boolean enabled;
    private final BackgroundSessions sessions;
    /** Per workspace id: the file listing taken after the last run, while still valid. */
    private final Map<String, Map<String, Long>> lastListing = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, Long>> eldest) {
            return size() > MAX_REMEMBERED;
        }
    });

    /** @param enabled false when the application switched changed-file reports off: no listing is taken */
    RunListings(boolean enabled, BackgroundSessions sessions) {
        this.enabled = enabled;
        this.sessions = sessions;
    }

    /** The listing before a run: the kept one when still valid, else a fresh one; null when reports are off. */
    Map<String, Long> before(ToolCall call, Workspace ws) {
        if (!enabled) {
            return null;
        }
        Map<String, Long> cached = lastListing.remove(ws.id());
        if (cached != null && sessions.runningFor(call.engine(), call.key()) == 0) {
            return cached;
        }
        return ChangedFiles.snapshot(call.engine(), ws);
    }

    /** What changed since {@code before} (null when reports are off); keeps the new listing for the next run. */
    ChangedFiles changedSince(ToolCall call, Workspace ws, Map<String, Long> before) {
        if (before == null) {
            return null;
        }
        Map<String, Long> after = ChangedFiles.snapshot(call.engine(), ws);
        // While a background session runs, the listing may be stale by the next run: do not keep it.
        if (after != null && sessions.runningFor(call.engine(), call.key()) == 0) {
            lastListing.put(ws.id(), after);
        }
        return ChangedFiles.between(before, after);
    }

    /** Drops the kept listing of a workspace whose files may have changed. */
    void forget(Workspace ws) {
        lastListing.remove(ws.id());
    }
}
