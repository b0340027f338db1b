package dev.codeexec.workspace.snapshot;

import java.time.Instant;
import java.util.Objects;

/**
 * One entry of a {@link SnapshotManifest}: a regular file with its size, SHA-256 and where its bytes start in the
 * snapshot's pack, a directory, or an entry that was skipped with the reason (a link or a special file, under the same rules
 * as input staging: never followed, never opened).
 *
 * @param path     workspace-relative path, {@code /} separators
 * @param type     what the entry is
 * @param size     the file's size in bytes (0 for other types)
 * @param sha256   the file's SHA-256, 64 lower-case hex digits; null for other types
 * @param offset   where the file's bytes start in the snapshot's pack; -1 for other types
 * @param mode     Unix permission bits where the source backend reports them, else -1
 * @param modified the file's modification time where known, else null
 * @param skipped  why the entry's content was not captured; null for files and directories
 */
public record SnapshotEntry(String path, Type type, long size, String sha256, long offset, int mode,
                            Instant modified, String skipped) {

    public SnapshotEntry {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(type, "type");
        if (size < 0) {
            throw new IllegalArgumentException("size (" + size + ") must not be negative");
        }
        if (type == Type.FILE && (sha256 == null || !sha256.matches("[0-9a-f]{64}"))) {
            throw new IllegalArgumentException("a file entry needs a SHA-256 of 64 lower-case hex digits: " + path);
        }
        if (type == Type.FILE ? offset < 0 : offset != -1) {
            throw new IllegalArgumentException("a file entry needs an offset in the pack, and only a file has one: "
                    + path);
        }
    }

    /** A captured regular file. */
    public static SnapshotEntry file(String path, long size, String sha256, long offset, int mode,
                                     Instant modified) {
        return new SnapshotEntry(path, Type.FILE, size, sha256, offset, mode, modified, null);
    }

    /** A directory (recreated on restore, with the target's default mode). */
    public static SnapshotEntry directory(String path, int mode) {
        return new SnapshotEntry(path, Type.DIRECTORY, 0, null, -1, mode, null, null);
    }

    /** An entry whose content was not captured, with the reason. */
    public static SnapshotEntry skipped(String path, Type type, String reason) {
        return new SnapshotEntry(path, type, 0, null, -1, -1, null, reason);
    }

    /** Whether the entry was left out of the snapshot. */
    public boolean isSkipped() {
        return skipped != null;
    }

    /** Whether the source backend reported a mode. */
    public boolean hasMode() {
        return mode >= 0;
    }

    /** What an entry of a manifest is. */
    public enum Type {
        /** A regular file, captured. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link: skipped, never followed (input staging's rule). */
        LINK,
        /** A FIFO, socket or device: skipped, never opened. */
        SPECIAL
    }
}
