package dev.codeexec.langchain4j;

import dev.codeexec.engine.FileChange;
import dev.codeexec.engine.FileChanges;
import java.util.ArrayList;
import java.util.List;

/**
 * The files under {@code work/} and {@code out/} that a run created, modified or deleted, as the workspace's change
 * tracker saw them ({@link ChangeTrackers}), in the words the model reads. Only those two folders are followed: they are
 * where the tools tell the model to put files; {@code runs/} and the rest are not reported.
 *
 * <p>When the folders hold more entries than the tracker follows, the report says that nothing was checked (and how
 * many entries that limit is) instead of claiming that nothing changed.
 */
final class ChangedFiles {

    /** The folders a run's changes are reported for. */
    static final List<String> FOLDERS = List.of("work", "out");

    private static final int MAX_SHOWN = 20;

    private final FileChanges changes;

    ChangedFiles(FileChanges changes) {
        this.changes = changes;
    }

    /** True when the comparison was complete and found nothing. */
    boolean isEmpty() {
        return changes.isEmpty();
    }

    /** False when the folders were too big to compare. */
    boolean complete() {
        return changes.complete();
    }

    /** Every changed path (created, then modified, then deleted), for the tool result's attributes. */
    List<String> paths() {
        List<String> all = new ArrayList<>();
        for (FileChange.Kind k : FileChange.Kind.values()) {
            for (FileChange c : changes.changes()) {
                if (c.kind() == k) {
                    all.add(c.path());
                }
            }
        }
        return all;
    }

    String describe() {
        if (!changes.complete()) {
            return "\n--- files changed ---\nnot checked: work/ and out/ hold more than " + changes.limit()
                    + " files and folders, more than are followed for this report";
        }
        if (changes.changes().isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("\n--- files changed ---");
        int shown = 0;
        for (FileChange.Kind k : FileChange.Kind.values()) {
            for (FileChange c : changes.changes()) {
                if (c.kind() != k || shown++ >= MAX_SHOWN) {
                    continue;
                }
                switch (k) {
                    case CREATED -> sb.append("\n+ ").append(c.path()).append(" (").append(c.sizeBytes())
                            .append(" bytes)");
                    case MODIFIED -> sb.append("\n~ ").append(c.path()).append(" (").append(c.sizeBytes())
                            .append(" bytes)");
                    case DELETED -> sb.append("\n- ").append(c.path());
                    default -> throw new IllegalStateException(k.name());
                }
            }
        }
        if (shown > MAX_SHOWN) {
            sb.append("\n... and ").append(shown - MAX_SHOWN).append(" more");
        }
        return sb.toString();
    }
}
