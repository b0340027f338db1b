package dev.codeexec.jupyter;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the rich outputs of cells (images and the like) are saved: {@code out/display_<n>.<ext>} in the cell's
 * workspace, numbered per workspace and never over an existing file, so they are returned with the files code wrote
 * under {@code out/}. Kept apart from {@link JupyterEngine} so the engine only hands each cell its sink.
 */
final class DisplayFiles {

    private final HostWorkspaceFS fs;
    private final Map<String, AtomicInteger> counters = new ConcurrentHashMap<>();

    DisplayFiles(HostWorkspaceFS fs) {
        this.fs = fs;
    }

    /** Saves a cell's rich outputs as {@code out/display_<n>.<ext>}, never over an existing file. */
    Cell.RichOutputs of(Workspace ws) {
        AtomicInteger counter = counters.computeIfAbsent(ws.id(), id -> new AtomicInteger());
        return (ext, bytes) -> {
            PathResolver r = fs.resolver(ws);
            String name;
            do {
                name = "out/display_" + counter.incrementAndGet() + "." + ext.toLowerCase(Locale.ROOT);
            } while (Files.exists(r.resolve(name), LinkOption.NOFOLLOW_LINKS));
            fs.putFiles(ws, List.of(PutFile.of(name, bytes)));
            return name;
        };
    }

    /** Forgets a removed workspace's numbering. */
    void forget(String workspaceId) {
        counters.remove(workspaceId);
    }
}
