package dev.codeexec.engine;

import java.time.Instant;
import java.util.Objects;

/**
 * One entry of a workspace as seen without following a link at it: what {@link WorkspaceFS#entries} reports, so that
 * a caller that copies a workspace (a snapshot) can tell regular files from links and special files, and keep modes.
 *
 * @param path      workspace-relative path, {@code /} separators
 * @param kind      what the entry is
 * @param sizeBytes the size of a {@link Kind#FILE} (0 for other kinds)
 * @param mode      Unix permission bits ({@code 0644}); -1 when the file system does not report modes
 * @param modified  the last modification time; {@link Instant#EPOCH} when not known
 */
public record WorkspaceEntry(String path, Kind kind, long sizeBytes, int mode, Instant modified) {

    public WorkspaceEntry {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        modified = modified == null ? Instant.EPOCH : modified;
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("sizeBytes (" + sizeBytes + ") must not be negative");
        }
        if (mode < -1 || mode > 07777) {
            throw new IllegalArgumentException("mode (" + mode + ") must be -1 or within 0..07777");
        }
    }

    /** Whether the file system reported a mode for this entry. */
    public boolean hasMode() {
        return mode >= 0;
    }

    /** What an entry is, as seen without following a link at it. */
    public enum Kind {
        /** A regular file: the only kind whose content is read. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link, reported as itself and never followed. */
        LINK,
        /** A FIFO, socket or device: never opened (opening a FIFO blocks until a writer comes). */
        OTHER
    }
}
