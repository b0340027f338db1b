package dev.codeexec.workspace.snapshot;

import dev.codeexec.engine.CodeExecException;

/**
 * A restore was refused because the snapshot is not what its manifest says: a blob is missing, or its bytes do not
 * have the size and SHA-256 the manifest records (tampered with, or damaged), or the manifest itself is malformed.
 * The message names the workspace path concerned. The target workspace was not changed (every blob is checked before
 * the first file is written). Do not retry with the same snapshot; take a new one, or restore another version.
 */
public class SnapshotIntegrityException extends CodeExecException {

    private final String path;

    /**
     * @param path the workspace path whose blob is wrong, or null when the manifest itself is
     */
    public SnapshotIntegrityException(String path, String message) {
        super(message);
        this.path = path;
    }

    /**
     * @param path the workspace path whose blob is wrong, or null when the manifest itself is
     */
    public SnapshotIntegrityException(String path, String message, Throwable cause) {
        super(message, cause);
        this.path = path;
    }

    /** The workspace path whose blob is missing or wrong, or null when the manifest itself is at fault. */
    public String path() {
        return path;
    }
}
