package dev.codeexec.workspace.snapshot;

import java.util.Objects;

/**
 * One difference a {@link RestoreReceipt} found between a manifest and what the engine now shows in the workspace.
 *
 * @param kind     what differs
 * @param path     the workspace path
 * @param expected what the manifest records (size, digest or mode), or null for {@link Kind#EXTRA}
 * @param actual   what the workspace shows, or null for {@link Kind#MISSING}
 */
public record ReceiptDifference(Kind kind, String path, String expected, String actual) {

    public ReceiptDifference {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(path, "path");
    }

    @Override
    public String toString() {
        return switch (kind) {
            case MISSING -> "missing " + path + " (expected " + expected + ")";
            case EXTRA -> "extra " + path + " (" + actual + ", not in the snapshot)";
            case CHANGED -> "changed " + path + " (expected " + expected + ", found " + actual + ")";
            case MODE -> "mode of " + path + " (expected " + expected + ", found " + actual + ")";
        };
    }

    /** What differs. */
    public enum Kind {
        /** A file of the manifest is not in the workspace (or is no longer a regular file). */
        MISSING,
        /** A file's size or SHA-256 differs from the manifest's. */
        CHANGED,
        /** A file's mode differs (compared only where both the manifest and the engine report modes). */
        MODE,
        /** A file in the captured folders that the snapshot does not hold (the target had it before, or a program made it). */
        EXTRA
    }
}
