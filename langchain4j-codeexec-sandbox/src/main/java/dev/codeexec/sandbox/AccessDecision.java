package dev.codeexec.sandbox;

import dev.codeexec.workspace.WorkspaceGlob;
import dev.codeexec.workspace.PathAccess;
import java.util.ArrayList;
import java.util.List;

/**
 * The rule "most specific wins; ties none &gt; write &gt; read" applied to workspace-relative paths, for the file
 * operations the application performs on the host ({@link dev.codeexec.engine.WorkspaceFS}). Pure.
 */
final class AccessDecision implements PathAccess {

    private final PermissionProfile profile;
    private final List<WorkspaceGlob> globs;

    AccessDecision(PermissionProfile profile) {
        this.profile = profile;
        List<WorkspaceGlob> g = new ArrayList<>();
        for (String s : profile.noAccessGlobs()) {
            g.add(WorkspaceGlob.compile(s));
        }
        this.globs = List.copyOf(g);
    }

    /**
     * What the profile allows for a normalised workspace-relative path ("." is the root). Protected metadata directly
     * inside a writable workspace root counts as {@link FileAccess#READ}. A path no rule covers is
     * {@link FileAccess#NONE}.
     */
    FileAccess decide(String rel) {
        if (profile.enforcement() != PermissionProfile.Enforcement.MANAGED) {
            return FileAccess.WRITE;
        }
        int bestDepth = -1;
        int bestPrecedence = -1;
        FileAccess best = FileAccess.NONE;
        int depth = rel.equals(".") ? 0 : rel.split("/").length;
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (r.isHostPath() || r.isHomePath()) {
                continue;
            }
            int d = ancestorDepth(r.path(), rel);
            if (d < 0) {
                continue;
            }
            int prec = r.access().precedence() * 2;
            if (d > bestDepth || d == bestDepth && prec > bestPrecedence) {
                bestDepth = d;
                bestPrecedence = prec;
                best = r.access();
            }
        }
        if (best == FileAccess.WRITE && depth >= 1) {
            // Protected metadata under a writable root: read-only, beating the write grant on equal depth.
            String first = rel.contains("/") ? rel.substring(0, rel.indexOf('/')) : rel;
            if (profile.protectedMetadata().contains(first) && writableRootIsWorkspace() && bestDepth <= 1) {
                bestDepth = 1;
                bestPrecedence = FileAccess.WRITE.precedence() * 2 + 1;
                best = FileAccess.READ;
            }
        }
        if (!globs.isEmpty() && !rel.equals(".")) {
            String[] parts = rel.split("/");
            StringBuilder prefix = new StringBuilder();
            for (int i = 0; i < parts.length; i++) {
                if (i > 0) {
                    prefix.append('/');
                }
                prefix.append(parts[i]);
                int d = i + 1;
                for (WorkspaceGlob g : globs) {
                    // A glob counts as an exact no-access rule on each path it matches.
                    if (d >= bestDepth && g.matches(prefix.toString())) {
                        return FileAccess.NONE;
                    }
                }
            }
        }
        return best;
    }

    private boolean writableRootIsWorkspace() {
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (r.path().equals(".") && r.access() == FileAccess.WRITE) {
                return true;
            }
        }
        return false;
    }

    /** Depth of {@code rule} when it is {@code rel} or an ancestor of it, else -1. */
    private static int ancestorDepth(String rule, String rel) {
        if (rule.equals(".")) {
            return 0;
        }
        if (rel.equals(rule) || rel.startsWith(rule + "/")) {
            return rule.split("/").length;
        }
        return -1;
    }

    /** Application file operations may read anything the program could see, and any path that is not hidden. */
    @Override
    public boolean canRead(String relativePath) {
        return decide(relativePath) != FileAccess.NONE;
    }

    /**
     * Application file operations may write any path that is not hidden (staging code into a read-only workspace is
     * the application's right; hiding is absolute).
     */
    @Override
    public boolean canWrite(String relativePath) {
        return decide(relativePath) != FileAccess.NONE;
    }
}
