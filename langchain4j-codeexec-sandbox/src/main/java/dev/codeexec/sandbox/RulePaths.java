package dev.codeexec.sandbox;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.workspace.WorkspaceGlob;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * Resolves the paths a {@link PermissionProfile}'s rules name into entries of real host paths, without following a
 * symbolic link inside a directory a sandbox can change: such a link may have been planted by an earlier run, and a
 * rule means the path, not whatever a program made it lead to. A grant through such a link is refused, a no-access
 * rule on one hides nothing (its target is governed by its own rules). Also expands the profile's no-access globs
 * over the workspace, again without following links. Separate from {@link SandboxLayout} because this is the one
 * place that turns rule text into host paths.
 */
final class RulePaths {

    private RulePaths() {
    }

    /** True when a host no-access rule covers {@code p} and no grant lies between them. */
    static boolean hiddenByHostRule(PermissionProfile profile, Path p) {
        String s = p.toString();
        String best = null;
        FileAccess bestAccess = null;
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (!r.isHostPath()) {
                continue;
            }
            String rp = r.path();
            boolean covers = rp.equals("/") || s.equals(rp) || s.startsWith(rp + "/");
            if (covers && (best == null || rp.length() > best.length()
                    || rp.length() == best.length() && r.access().precedence() > bestAccess.precedence())) {
                best = rp;
                bestAccess = r.access();
            }
        }
        return bestAccess == FileAccess.NONE;
    }

    /** Outcome of resolving a rule's host path. */
    private record Resolved(String real, String linkInside) {
    }

    /**
     * Resolves a host path like realpath(3), but refuses to follow a symbolic link that lies inside a directory a
     * sandbox can change ({@code changeable}): such a link may have been planted by a program, and the rule means the
     * path, not whatever a program made it lead to. Returns the real path, or null when the path does not exist, or
     * the link (as its host path) when one was met inside a changeable directory.
     */
    private static Resolved resolveHostPath(String path, List<String> changeable, HostRuleCache.Recorder recorder) {
        Deque<String> todo = new ArrayDeque<>();
        for (String part : path.split("/")) {
            if (!part.isEmpty()) {
                todo.add(part);
            }
        }
        String cur = "/";
        int hops = 0;
        while (!todo.isEmpty()) {
            String part = todo.pollFirst();
            if (part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                String up = LayoutPaths.parent(cur);
                cur = up == null ? "/" : up;
                continue;
            }
            String next = cur.equals("/") ? "/" + part : cur + "/" + part;
            Path np = Path.of(next);
            if (recorder != null) {
                recorder.lookingIn(cur);
            }
            BasicFileAttributes a = LayoutPaths.attributes(np);
            if (a == null) {
                return new Resolved(null, null);
            }
            if (a.isSymbolicLink()) {
                for (String c : changeable) {
                    if (next.startsWith(c + "/")) {
                        return new Resolved(null, next);
                    }
                }
                if (++hops > 40) {
                    return new Resolved(null, null);
                }
                String target;
                try {
                    target = Files.readSymbolicLink(np).toString();
                } catch (IOException e) {
                    return new Resolved(null, null);
                }
                List<String> parts = new ArrayList<>();
                for (String t : target.split("/")) {
                    if (!t.isEmpty()) {
                        parts.add(t);
                    }
                }
                Collections.reverse(parts);
                parts.forEach(todo::addFirst);
                if (target.startsWith("/")) {
                    cur = "/";
                }
                continue;
            }
            cur = next;
        }
        return new Resolved(cur, null);
    }

    static void hostPath(String p, FileAccess access, String raw, Map<String, LayoutEntry> entries,
                                 List<String> changeable) {
        hostPath(p, access, raw, entries, changeable, null);
    }

    /**
     * Resolves a host rule's path into {@code entries}, telling {@code recorder} (when not null) every directory it
     * looks in, including for a path that does not exist (so that its creation is noticed: see
     * {@link HostRuleCache}).
     */
    static void hostPath(String p, FileAccess access, String raw, Map<String, LayoutEntry> entries,
                         List<String> changeable, HostRuleCache.Recorder recorder) {
        if (!LayoutPaths.present(Path.of(p))) {
            if (recorder != null) {
                resolveHostPath(p, changeable, recorder); // where it would appear
            }
            // Missing, or a dangling link: nothing to hide; a grant that vanished is refused.
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' no longer exists on this host; refusing to run with a different layout");
            }
            return;
        }
        Resolved r = resolveHostPath(p, changeable, recorder);
        if (r.linkInside != null) {
            if (access == FileAccess.NONE) {
                // A link inside a writable directory: what it points at is governed by the rules of that path.
                return;
            }
            throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw + "' passes through "
                    + "a symbolic link inside a writable directory (a program may have planted it); grants must name "
                    + "real paths there");
        }
        if (r.real == null) {
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' no longer exists on this host; refusing to run with a different layout");
            }
            return;
        }
        boolean dir = Files.isDirectory(Path.of(r.real), LinkOption.NOFOLLOW_LINKS);
        LayoutEntry.put(entries, r.real, access == FileAccess.NONE ? LayoutEntry.none(dir, raw)
                : LayoutEntry.grant(access, raw));
    }

    static void workspacePath(Path workspace, String rel, FileAccess access, Map<String, LayoutEntry> entries) {
        Path cur = workspace;
        if (!rel.equals(".")) {
            for (String part : rel.split("/")) {
                cur = cur.resolve(part);
                BasicFileAttributes a = LayoutPaths.attributes(cur);
                if (a == null) {
                    return;
                }
                if (a.isSymbolicLink()) {
                    if (access == FileAccess.NONE) {
                        // What the link points at is governed by the rules of that path; file operations still
                        // refuse this name.
                        return;
                    }
                    throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + rel
                            + "' passes through a symbolic link in the workspace; grants must name real paths");
                }
            }
        }
        boolean dir = Files.isDirectory(cur, LinkOption.NOFOLLOW_LINKS);
        LayoutEntry.put(entries, cur.toString(), access == FileAccess.NONE ? LayoutEntry.none(dir, rel)
                : LayoutEntry.grant(access, rel));
    }

    static void hideGlobMatches(PermissionProfile profile, Path workspace, Map<String, LayoutEntry> entries) {
        List<WorkspaceGlob> globs = profile.noAccessGlobs().stream().map(WorkspaceGlob::compile).toList();
        int[] seen = {0};
        try {
            Files.walkFileTree(workspace, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.equals(workspace)) {
                        return FileVisitResult.CONTINUE;
                    }
                    count();
                    String glob = matches(dir);
                    if (glob != null) {
                        LayoutEntry.put(entries, dir.toString(), LayoutEntry.none(true, glob));
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    count();
                    String glob = attrs.isSymbolicLink() ? null : matches(file);
                    if (glob != null) {
                        LayoutEntry.put(entries, file.toString(), LayoutEntry.none(false, glob));
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                private void count() {
                    if (++seen[0] > SandboxLayout.MAX_GLOB_WALK) {
                        throw new PolicyViolationException("the workspace holds more than "
                                + SandboxLayout.MAX_GLOB_WALK
                                + " entries; refusing to run because its no-access globs cannot be applied");
                    }
                }

                private String matches(Path p) {
                    String rel = workspace.relativize(p).toString();
                    for (int i = 0; i < globs.size(); i++) {
                        if (globs.get(i).matches(rel)) {
                            return profile.noAccessGlobs().get(i);
                        }
                    }
                    return null;
                }
            });
        } catch (IOException e) {
            throw new PolicyViolationException("cannot apply the no-access globs: " + e.getClass().getSimpleName());
        }
    }
}
