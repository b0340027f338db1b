package dev.codeexec.engine;

import java.util.Objects;

/**
 * One file that a {@link FileChangeTracker} found changed.
 *
 * @param path      workspace-relative path of the file
 * @param kind      what happened to it
 * @param sizeBytes its size after the change; 0 when it was deleted
 */
public record FileChange(String path, Kind kind, long sizeBytes) {

    public FileChange {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
    }

    /** What happened to a file. */
    public enum Kind {
        /** The file did not exist before and does now. */
        CREATED,
        /**
         * The file existed before and does now, and was written, replaced, resized or had its attributes changed
         * (how finely depends on the tracker: see {@link WorkspaceFS#trackChanges}).
         */
        MODIFIED,
        /** The file existed before and does not now (deleted, or renamed away). */
        DELETED
    }
}
