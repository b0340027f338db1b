package dev.codeexec.engine;

import java.util.List;

/**
 * What a {@link FileChangeTracker} found changed since its previous look.
 *
 * @param changes  the changed files (not directories), sorted by path; empty when nothing changed or when the
 *                 comparison was not complete
 * @param complete false when the tracked folders hold more entries than the tracker follows (its {@code limit}), or
 *                 held more at its previous look: then nothing was compared, and {@code changes} is empty even if
 *                 files did change
 * @param limit    the most files and directories the tracker follows, to name when the comparison was not complete
 */
public record FileChanges(List<FileChange> changes, boolean complete, int limit) {

    public FileChanges {
        changes = changes == null ? List.of() : List.copyOf(changes);
        if (!complete && !changes.isEmpty()) {
            throw new IllegalArgumentException("an incomplete comparison lists no changes");
        }
    }

    /** Nothing was compared: the tracked folders hold more than {@code limit} entries. */
    public static FileChanges notCompared(int limit) {
        return new FileChanges(List.of(), false, limit);
    }

    /** True when the comparison was complete and found nothing. */
    public boolean isEmpty() {
        return complete && changes.isEmpty();
    }
}
