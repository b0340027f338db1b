package dev.codeexec.workspace;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The listing and glob rules of {@link StandardWorkspaceFS}, on {@link WorkspaceFiles#walk}: hidden temporary names of
 * writes and imports are skipped, paths the access rules deny are skipped (a denied directory with all it holds), a
 * link counts only when it leads to a regular file inside the workspace (with that file's size and time), and a walk
 * stops after visiting {@link StandardWorkspaceFS#MAX_WALK_ENTRIES} entries or when its visitor says so. Every walk
 * reports whether it went through the whole tree, so that a cut listing is never mistaken for a complete one.
 */
final class WorkspaceWalk {

    private final WorkspaceFiles files;
    private final PathAccess access;

    WorkspaceWalk(WorkspaceFiles files, PathAccess access) {
        this.files = files;
        this.access = access;
    }

    /**
     * Receives what a walk reports: regular files (a link's entry carries its target's size and time, and the type
     * {@link EntryType#FILE}) and, when asked for, directories. Returns false to stop the walk.
     */
    interface Visitor {
        boolean visit(FileEntry entry);
    }

    /** Receives the files a glob match finds, with their sizes. Returns false to stop the walk. */
    interface MatchVisitor {
        boolean found(String path, long size);
    }

    /**
     * Finds the files (not directories) matching any glob, each once. A glob whose fixed base leaves the workspace or
     * does not exist contributes nothing; links out of the workspace are skipped.
     *
     * @return true when every glob's tree was walked to the end; false when the visitor or the walk bound stopped it
     */
    boolean match(List<String> globs, Set<String> withoutContents, MatchVisitor v) {
        Set<String> seen = new java.util.HashSet<>();
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
                if (glob.matches(glob.base()) && access.canRead(base) && seen.add(glob.base())
                        && !v.found(glob.base(), entry.get().size())) {
                    return false;
                }
            } else if (entry.get().isDirectory()) {
                boolean complete = walk(base, false, 0, withoutContents, e -> {
                    String rel = e.path();
                    return !glob.matches(rel) || !seen.add(rel) || v.found(rel, e.size());
                });
                if (!complete) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Walks a resolved directory without following links. A link to a regular file inside the workspace is reported
     * with its target's size and time; links leading elsewhere are skipped, and so are special files.
     *
     * @param includeDirs     report directories too
     * @param maxDepth        levels below {@code dir} to report (1: its own entries); 0 for no limit
     * @param withoutContents directories reported but not descended into, unless {@code dir} is at or below one
     * @return true when the whole tree was walked; false when the visitor stopped it or the walk visited
     *         {@link StandardWorkspaceFS#MAX_WALK_ENTRIES} entries
     */
    boolean walk(String dir, boolean includeDirs, int maxDepth, Set<String> withoutContents, Visitor v) {
        return walk(dir, includeDirs, maxDepth, withoutContents, StandardWorkspaceFS.MAX_WALK_ENTRIES, v);
    }

    /** Like {@link #walk(String, boolean, int, Set, Visitor)}, visiting at most {@code maxVisited} entries. */
    boolean walk(String dir, boolean includeDirs, int maxDepth, Set<String> withoutContents, int maxVisited,
                 Visitor v) {
        Set<String> collapsed = withoutContents.isEmpty() ? Set.of()
                : withoutContents.stream().filter(d -> !(dir.equals(d) || dir.startsWith(d + "/")))
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
        String prefix = dir.equals(".") ? "" : dir + "/";
        int[] visited = {1}; // the directory walked counts as the first entry
        boolean[] stopped = {false};
        files.walk(dir, e -> {
            if (++visited[0] > maxVisited) {
                stopped[0] = true;
                return WalkAction.STOP;
            }
            String name = e.name();
            if (e.isDirectory()) {
                if (name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX) || !access.canRead(e.path())) {
                    return WalkAction.SKIP_SUBTREE; // being staged, not yet in place; or denied with all it holds
                }
                if (includeDirs && !v.visit(e)) {
                    stopped[0] = true;
                    return WalkAction.STOP;
                }
                boolean deepest = maxDepth > 0 && depth(prefix, e.path()) >= maxDepth;
                return deepest || collapsed.contains(e.path()) ? WalkAction.SKIP_SUBTREE : WalkAction.CONTINUE;
            }
            FileEntry reported = fileEntry(e);
            if (reported != null && !v.visit(reported)) {
                stopped[0] = true;
                return WalkAction.STOP;
            }
            return WalkAction.CONTINUE;
        });
        return !stopped[0];
    }

    /**
     * The entry at a normalised path as a walk of an enclosing directory would report it: a directory, a regular
     * file, or a link to a regular file inside the workspace (as that file, with the link's path); null when a walk
     * would leave it out (missing, hidden temporary name, denied, a link anywhere else, a special file) or when a
     * directory above it is a link (a walk does not descend links).
     */
    FileEntry visible(String path) {
        String parent = parentOf(path);
        try {
            if (!files.resolve(parent).equals(parent)) {
                return null;
            }
        } catch (InvalidSpecException e) {
            return null;
        }
        for (String p = path; !p.equals("."); p = parentOf(p)) {
            String name = p.substring(p.lastIndexOf('/') + 1);
            if (name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX) || !access.canRead(p)) {
                return null;
            }
        }
        if (path.substring(path.lastIndexOf('/') + 1).startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX)) {
            return null;
        }
        Optional<FileEntry> e;
        try {
            e = files.stat(path);
        } catch (InvalidSpecException x) {
            return null;
        }
        if (e.isEmpty()) {
            return null;
        }
        return e.get().isDirectory() ? e.get() : fileEntry(e.get());
    }

    /** A non-directory entry as reported: a file itself, a link as its target file, anything else null. */
    private FileEntry fileEntry(FileEntry e) {
        String name = e.name();
        if (name.startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX) || name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX)
                || !access.canRead(e.path())) {
            return null;
        }
        return switch (e.type()) {
            case FILE -> e;
            case LINK -> linkedFile(e);
            default -> null;
        };
    }

    /** A link as the regular file it leads to inside the workspace (at the link's path), or null. */
    private FileEntry linkedFile(FileEntry link) {
        String target;
        try {
            target = files.resolve(link.path());
        } catch (InvalidSpecException e) {
            // Leads outside, dangles, or the name itself cannot be a workspace path: not listed.
            return null;
        }
        Optional<FileEntry> t = files.stat(target);
        if (t.isEmpty() || !t.get().isFile() || !access.canRead(target)) {
            return null;
        }
        return new FileEntry(link.path(), EntryType.FILE, t.get().size(), t.get().mode(), t.get().modifiedTime());
    }

    private static int depth(String prefix, String path) {
        int d = 1;
        for (int i = prefix.length(); i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                d++;
            }
        }
        return d;
    }

    static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "." : path.substring(0, slash);
    }
}
