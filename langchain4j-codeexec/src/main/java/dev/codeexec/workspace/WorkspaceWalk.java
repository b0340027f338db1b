package dev.codeexec.workspace;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The listing and glob rules of {@link StandardWorkspaceFS}, on {@link WorkspaceFiles#walk}: hidden temporary names of
 * writes and imports are skipped, paths the access rules deny are skipped (a denied directory with all it holds), a
 * link counts only when it leads to a regular file inside the workspace, and a walk stops after
 * {@link StandardWorkspaceFS#MAX_WALK_ENTRIES}.
 */
final class WorkspaceWalk {

    private final WorkspaceFiles files;
    private final PathAccess access;

    WorkspaceWalk(WorkspaceFiles files, PathAccess access) {
        this.files = files;
        this.access = access;
    }

    /** Receives what a walk reports: files with their size (a link's is its target's), and directories. */
    interface Visitor {
        void visit(String path, long size, boolean directory);
    }

    /**
     * Files (not directories) matching any glob, sorted, with sizes. A glob whose fixed base leaves the workspace or
     * does not exist contributes nothing; links out of the workspace are skipped.
     */
    TreeMap<String, Long> match(List<String> globs) {
        TreeMap<String, Long> out = new TreeMap<>();
        for (String g : globs) {
            WorkspaceGlob glob = WorkspaceGlob.compile(g);
            String base;
            try {
                base = files.resolve(glob.base());
            } catch (PathEscapeException e) {
                continue;
            }
            Optional<FileEntry> entry = files.stat(base);
            if (entry.isEmpty()) {
                continue;
            }
            if (entry.get().isFile()) {
                if (glob.matches(glob.base()) && access.canRead(base)) {
                    out.put(glob.base(), entry.get().size());
                }
            } else if (entry.get().isDirectory()) {
                walk(base, (rel, size, dir) -> {
                    if (!dir && glob.matches(rel)) {
                        out.put(rel, size);
                    }
                }, false);
            }
        }
        return out;
    }

    /**
     * Walks a resolved directory without following links. A link to a regular file inside the workspace is reported
     * with its target's size; links leading elsewhere are skipped, and so are special files.
     */
    void walk(String dir, Visitor v, boolean includeDirs) {
        int[] count = {1}; // the directory walked counts as the first entry
        files.walk(dir, e -> {
            String name = e.name();
            if (e.isDirectory()) {
                if (name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX)) {
                    return WalkAction.SKIP_SUBTREE; // a directory being staged, not yet in place
                }
                if (!access.canRead(e.path())) {
                    return WalkAction.SKIP_SUBTREE;
                }
                if (includeDirs) {
                    v.visit(e.path(), 0, true);
                }
                return ++count[0] > StandardWorkspaceFS.MAX_WALK_ENTRIES ? WalkAction.STOP : WalkAction.CONTINUE;
            }
            if (name.startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX) || name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX)
                    || !access.canRead(e.path())) {
                return WalkAction.CONTINUE;
            }
            long size;
            switch (e.type()) {
                case FILE -> size = e.size();
                case LINK -> {
                    Long target = linkedFileSize(e.path());
                    if (target == null) {
                        return WalkAction.CONTINUE;
                    }
                    size = target;
                }
                default -> {
                    return WalkAction.CONTINUE;
                }
            }
            v.visit(e.path(), size, false);
            return ++count[0] > StandardWorkspaceFS.MAX_WALK_ENTRIES ? WalkAction.STOP : WalkAction.CONTINUE;
        });
    }

    /** The size of the regular file a link leads to inside the workspace, or null when it leads anywhere else. */
    private Long linkedFileSize(String link) {
        String target;
        try {
            target = files.resolve(link);
        } catch (InvalidSpecException e) {
            // Leads outside, dangles, or the name itself cannot be a workspace path: not listed.
            return null;
        }
        Optional<FileEntry> t = files.stat(target);
        if (t.isEmpty() || !t.get().isFile() || !access.canRead(target)) {
            return null;
        }
        return t.get().size();
    }
}
