package dev.codeexec.jupyter;

import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the rich outputs of cells (images and the like) are saved: {@code out/display_<n>.<ext>} in the cell's
 * workspace, numbered per workspace and never over an existing file, so they are returned with the files code wrote
 * under {@code out/}. Written through the engine's {@link WorkspaceFS}, so a kernel inside a boundary saves them where
 * that engine keeps the workspace. Kept apart from the engines so they only hand each cell its sink.
 */
final class DisplayFiles {

    private final WorkspaceFS fs;
    private final Map<String, AtomicInteger> counters = new ConcurrentHashMap<>();

    DisplayFiles(WorkspaceFS fs) {
        this.fs = fs;
    }

    /** Saves a cell's rich outputs as {@code out/display_<n>.<ext>}, never over an existing file. */
    Cell.RichOutputs of(Workspace ws) {
        AtomicInteger counter = counters.computeIfAbsent(ws.id(), id -> new AtomicInteger());
        return (ext, bytes) -> {
            String name;
            do {
                name = "out/display_" + counter.incrementAndGet() + "." + ext.toLowerCase(Locale.ROOT);
            } while (taken(ws, name));
            fs.putFiles(ws, List.of(PutFile.of(name, bytes)));
            return name;
        };
    }

    /** Whether something is at {@code name}: a file, or a link (also one that leads out of the workspace). */
    private boolean taken(Workspace ws, String name) {
        try {
            return fs.stat(ws, name).isPresent();
        } catch (PathEscapeException e) {
            return true;
        }
    }

    /** Forgets a removed workspace's numbering. */
    void forget(String workspaceId) {
        counters.remove(workspaceId);
    }
}
