package dev.codeexec.workspace.spi;

import static dev.codeexec.workspace.spi.RelativePaths.join;
import static dev.codeexec.workspace.spi.RelativePaths.parentOf;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The path rules and the link-resolving walk of a {@link RemoteWorkspaceFiles}, over its {@code lstat}: each path
 * checked once, resolved one component at a time, a link followed only to an existing entry inside the workspace,
 * missing directories created one component at a time. Remembers, for one operation, the paths it checked and the
 * directories it found real.
 */
final class LinkWalk {

    private final RemoteWorkspaceFiles files;
    /** Workspace-relative paths found to be real directories in this operation. */
    private final Set<String> dirs = new HashSet<>();
    /** Paths already checked (and their parents). */
    private final Set<String> checked = new HashSet<>();

    LinkWalk(RemoteWorkspaceFiles files) {
        this.files = files;
    }

    /** Forgets the directories found real, after the workspace changed. Checked paths stay checked. */
    void forget() {
        dirs.clear();
    }

    /** Checks a path given to a public operation, once per instance. */
    String checkPath(String path) {
        if (!checked.contains(path)) {
            RelativePaths.check(path);
            trust(path);
        }
        return path;
    }

    /** Marks a valid path and its parents as checked. */
    void trust(String path) {
        for (String p = path; checked.add(p) && !p.equals("."); p = parentOf(p)) {
            // each parent of a valid path is valid
        }
    }

    private static String rest(String head, String[] segs, int from) {
        StringBuilder sb = new StringBuilder(head);
        for (int j = from; j < segs.length; j++) {
            sb.append('/').append(segs[j]);
        }
        return sb.toString();
    }

    /** Where a followed link leads, and what is there. */
    private record Followed(String path, EntryType type) {
    }

    /**
     * The entry at {@code rel} (whose parents hold no links) with a link followed to a real, existing entry inside
     * the workspace; an entry that is not a link is itself.
     */
    private Followed follow(String rel, RemoteEntry link, String asked) {
        if (link.type() != EntryType.LINK) {
            return new Followed(rel, link.type());
        }
        String target = files.inside(link.linkTarget());
        if (link.linkTarget() != null && target == null) {
            throw new PathEscapeException("path '" + asked + "' leads outside the workspace through a link");
        }
        EntryType type = link.targetType();
        if (target != null && (type == null || type == EntryType.LINK)) {
            type = files.lstat(target).map(RemoteEntry::type).orElse(null);
        }
        if (target == null || type == null || type == EntryType.LINK) {
            throw new PathEscapeException("path '" + asked + "' goes through a link that does not resolve");
        }
        return new Followed(target, type);
    }

    /** Throws {@link RemoteWorkspaceFiles#workspaceGone} when the workspace root is no longer a directory. */
    void requireRoot() {
        if (files.lstat(".").map(RemoteEntry::type).orElse(null) != EntryType.DIRECTORY) {
            throw files.workspaceGone();
        }
    }

    /**
     * Resolves {@code rel} component by component; the last component is followed only when {@code last}. Missing
     * components, and what lies below a file, are kept as given.
     */
    String resolveFrom(String rel, String asked, boolean last) {
        return components(rel, asked, last, false);
    }

    /** Creates the missing directories of the checked {@code rel}; returns the resolved directory. */
    String ensureDir(String rel, String asked) {
        return components(rel, asked, true, true);
    }

    /** The walk of {@link #resolveFrom} and {@link #ensureDir}: with {@code create}, every component is a directory. */
    private String components(String rel, String asked, boolean followLast, boolean create) {
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            boolean isLast = i == segs.length - 1;
            if (isLast && !followLast) {
                return next;
            }
            if ((create || !isLast) && dirs.contains(next)) {
                cur = next;
                continue;
            }
            Optional<RemoteEntry> s = files.lstat(next);
            if (s.isEmpty()) {
                if (cur.equals(".") && (create || !isLast)) {
                    // A first component missing may mean the whole workspace is gone; never recreate it.
                    requireRoot();
                }
                return create ? make(cur, segs, i, asked) : rest(next, segs, i + 1);
            }
            Followed f = follow(next, s.get(), asked);
            if (f.type() == EntryType.DIRECTORY) {
                dirs.add(f.path());
            } else if (create) {
                throw new InvalidSpecException("'" + asked + "': a component is not a directory");
            } else if (!isLast) {
                // Nothing exists below a file: keep the rest as given (every lookup of it finds nothing).
                return rest(f.path(), segs, i + 1);
            }
            cur = f.path();
        }
        return cur;
    }

    /** Creates {@code segs[from..]} under the real directory {@code dir}; returns the last one. */
    private String make(String dir, String[] segs, int from, String asked) {
        List<String> names = new ArrayList<>();
        String name = segs[from];
        names.add(name);
        for (int j = from + 1; j < segs.length; j++) {
            name = name + "/" + segs[j];
            names.add(name);
        }
        files.makeDirs(dir, names, asked);
        for (String n : names) {
            dirs.add(join(dir, n));
        }
        return join(dir, name);
    }

    /** True when the resolved {@code dir} is a real directory (known, or looked at now). */
    boolean isDir(String dir) {
        if (dir.equals(".") || dirs.contains(dir)) {
            return true;
        }
        if (files.lstat(dir).map(RemoteEntry::type).orElse(null) == EntryType.DIRECTORY) {
            dirs.add(dir);
            return true;
        }
        return false;
    }
}
