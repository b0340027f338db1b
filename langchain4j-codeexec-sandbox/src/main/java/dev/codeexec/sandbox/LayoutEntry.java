package dev.codeexec.sandbox;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One planned operation of {@link SandboxLayout} while a plan is being built: the mount kind for a real host path,
 * the rule that produced it (for messages) and, once pinned, its descriptor or hard-link source. Kept mutable and
 * separate from {@link Mount} because the planning steps upgrade an entry's kind (a read rule becomes protected
 * metadata) and pinning fills in how it reaches bubblewrap; the finished plan turns entries into {@link Mount}s.
 */
final class LayoutEntry {

    Mount.Kind kind;
    /** The rule that produced the entry, as written (for messages), or null. */
    final String rule;
    int fd = -1;
    String source;

    LayoutEntry(Mount.Kind kind, String rule) {
        this.kind = kind;
        this.rule = rule;
    }

    static LayoutEntry none(boolean dir, String rule) {
        return new LayoutEntry(dir ? Mount.Kind.HIDE_DIR : Mount.Kind.HIDE_FILE, rule);
    }

    static LayoutEntry grant(FileAccess access, String rule) {
        return new LayoutEntry(access == FileAccess.WRITE ? Mount.Kind.BIND : Mount.Kind.RO_BIND, rule);
    }

    /** Keeps the entry of higher precedence when a path already has one (none &gt; protected &gt; write &gt; read). */
    static void put(Map<String, LayoutEntry> entries, String path, LayoutEntry e) {
        LayoutEntry old = entries.get(path);
        if (old == null || e.kind.precedence > old.kind.precedence
                || e.kind.precedence == old.kind.precedence && e.kind.ordinal() > old.kind.ordinal()) {
            entries.put(path, e);
        }
    }

    /** The writable binds: the roots inside which a program can create, rename and link. */
    static List<String> writableRoots(Map<String, LayoutEntry> entries) {
        List<String> roots = new ArrayList<>();
        entries.forEach((p, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                roots.add(p);
            }
        });
        return roots;
    }
}
