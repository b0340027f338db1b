package dev.codeexec.workspace.snapshot;

import dev.codeexec.engine.InvalidSpecException;

/**
 * A snapshot (or a restore) would exceed one of its bounds ({@link SnapshotOptions#maxFiles()},
 * {@link SnapshotOptions#maxTotalBytes()}): it was refused before it stored a manifest, or before the restore wrote a
 * file. Narrow what is captured (fewer roots, no {@code runs/}), delete files, or raise the bound, then retry.
 */
public class SnapshotLimitException extends InvalidSpecException {

    private final Bound bound;
    private final long limit;
    private final long size;

    /**
     * @param bound the bound crossed
     * @param limit its value
     * @param size  what was found when the bound was crossed (at least {@code limit + 1}; more may exist)
     */
    public SnapshotLimitException(Bound bound, long limit, long size) {
        super(message(bound, limit, size));
        this.bound = bound;
        this.limit = limit;
        this.size = size;
    }

    private static String message(Bound bound, long limit, long size) {
        return switch (bound) {
            case MAX_FILES -> "the snapshot is refused: it would hold more than maxFiles = " + limit + " files ("
                    + size + " found before stopping); nothing was recorded. Capture fewer folders or raise the bound";
            case MAX_ENTRIES -> "the snapshot is refused: it would hold more than " + limit + " directories, links "
                    + "and special files (" + size + " found before stopping); nothing was recorded";
            case MAX_TOTAL_BYTES -> "the snapshot is refused: its files hold more than maxTotalBytes = " + limit
                    + " bytes (" + size + " bytes found before stopping); nothing was recorded. Capture fewer folders,"
                    + " delete large files or raise the bound";
        };
    }

    /** The bound crossed. */
    public Bound bound() {
        return bound;
    }

    /** The bound's value. */
    public long limit() {
        return limit;
    }

    /** What was counted when the bound was crossed. */
    public long size() {
        return size;
    }

    /** The bounds of a snapshot. */
    public enum Bound {
        /** {@link SnapshotOptions#maxFiles()}: regular files. */
        MAX_FILES,
        /** {@link SnapshotOptions#maxFiles()} again, for directories, links and special files. */
        MAX_ENTRIES,
        /** {@link SnapshotOptions#maxTotalBytes()}: bytes of file content. */
        MAX_TOTAL_BYTES
    }
}
