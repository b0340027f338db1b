package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Refusals {@link SandboxLayout} applies to a finished set of entries before pinning: no bind may reach into the
 * sandbox root beyond the workspace, no hidden file inside a writable root may have another hard link that would show
 * its content, and (when programs run as the sandbox user) every grant must be usable by that user. Each check only
 * refuses; none changes the plan, so a run either gets exactly what its rules say or does not run.
 */
final class LayoutChecks {

    private LayoutChecks() {
    }

    /**
     * Refuses a bind at or below the sandbox root other than the workspace and what lies in it: the root holds every
     * other workspace and the engine's state, and its stand-in (an empty directory) must stay empty but for this
     * workspace. A grant that resolves into it through a link is caught here too, since entries are real paths.
     */
    static void keepOutOfSandboxRoot(Map<String, LayoutEntry> entries, Path workspace, Path sandboxRoot) {
        String root = sandboxRoot.toString();
        String ws = workspace.toString();
        entries.forEach((path, e) -> {
            if (e.kind.isBind() && LayoutPaths.isAtOrBelow(path, root) && !LayoutPaths.isAtOrBelow(path, ws)) {
                throw new PolicyViolationException("a grant reaches into the sandbox root, which holds every "
                        + "workspace and the engine's state; grant paths outside it");
            }
        });
    }

    /** A hidden file inside a writable root with another hard link would show its content under that other name. */
    static void refuseHiddenFilesWithOtherNames(Map<String, LayoutEntry> entries) {
        List<String> writable = LayoutEntry.writableRoots(entries);
        entries.forEach((path, e) -> {
            if (e.kind != Mount.Kind.HIDE_FILE || writable.stream().noneMatch(w -> path.startsWith(w + "/"))) {
                return;
            }
            int links = LayoutPaths.links(Path.of(path));
            if (links > 1) {
                throw new PolicyViolationException("no-access rule '" + (e.rule == null ? Path.of(path)
                        .getFileName() : e.rule) + "' cannot be kept: the hidden file has " + links + " names (hard "
                        + "links), and another name inside a writable directory would show its content. Nothing ran;"
                        + " remove the other link or the file");
            }
        });
    }

    /**
     * When programs run as the unprivileged sandbox user, bubblewrap (as that user) must reach every grant and the
     * program must be able to use it: a grant it could not use is refused with the reason, not run half-working.
     */
    static void checkUsable(Map<String, LayoutEntry> entries, Path workspace, SandboxUser user) {
        if (!user.drops()) {
            return;
        }
        String ws = workspace.toString();
        entries.forEach((path, e) -> {
            if (e.rule == null || !(e.kind == Mount.Kind.RO_BIND || e.kind == Mount.Kind.BIND)
                    || path.equals("/") || LayoutPaths.isAtOrBelow(path, ws)) {
                return;
            }
            Path p = Path.of(path);
            Path blocked = user.firstUnsearchable(p.getParent() == null ? p : p.getParent());
            boolean ok = blocked == null && (e.kind == Mount.Kind.BIND ? user.canWrite(p) && user.canRead(p)
                    : user.canRead(p));
            if (!ok) {
                String what = e.kind == Mount.Kind.BIND ? "write" : "read";
                throw new InvalidSpecException(what + " grant '" + e.rule + "' is not " + what + "able by the "
                        + "sandbox user (uid " + user.uid() + "), as which programs run (never as root)"
                        + (blocked == null ? "" : ": '" + blocked + "' is not searchable by it")
                        + "; give that user access (owner, group " + user.gid() + " or others), or grant another "
                        + "path");
            }
        });
    }
}
