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

    /** Follows a link (whose parents hold no links) to a real, existing entry inside the workspace. */
    private Followed follow(RemoteEntry link, String asked) {
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
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            boolean isLast = i == segs.length - 1;
            if (isLast && !last) {
                return next;
            }
            if (!isLast && dirs.contains(next)) {
                cur = next;
                continue;
            }
            Optional<RemoteEntry> s = files.lstat(next);
            if (s.isEmpty()) {
                if (!isLast && cur.equals(".")) {
                    requireRoot(); // a first component missing may mean the whole workspace is gone
                }
                return rest(next, segs, i + 1);
            }
            EntryType type = s.get().type();
            if (type == EntryType.LINK) {
                Followed f = follow(s.get(), asked);
                next = f.path();
                type = f.type();
            }
            if (type == EntryType.DIRECTORY) {
                dirs.add(next);
            } else if (!isLast) {
                // Nothing exists below a file: keep the rest as given (every lookup of it finds nothing).
                return rest(next, segs, i + 1);
            }
            cur = next;
        }
        return cur;
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

    /** Creates the missing directories of the checked {@code rel}; returns the resolved directory. */
    String ensureDir(String rel, String asked) {
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            if (dirs.contains(next)) {
                cur = next;
                continue;
            }
            Optional<RemoteEntry> s = files.lstat(next);
            if (s.isEmpty()) {
                if (cur.equals(".")) {
                    requireRoot(); // never recreate a workspace that was removed
                }
                List<String> names = new ArrayList<>();
                String name = segs[i];
                names.add(name);
                for (int j = i + 1; j < segs.length; j++) {
                    name = name + "/" + segs[j];
                    names.add(name);
                }
                files.makeDirs(cur, names, asked);
                for (String n : names) {
                    dirs.add(join(cur, n));
                }
                return join(cur, name);
            }
            EntryType type = s.get().type();
            if (type == EntryType.LINK) {
                Followed f = follow(s.get(), asked);
                next = f.path();
                type = f.type();
            }
            if (type != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + asked + "': a component is not a directory");
            }
            dirs.add(next);
            cur = next;
        }
        return cur;
    }
}
