package dev.codeexec.engine;

/**
 * Follows the files below some folders of one workspace and tells what changed between two looks, so that a caller
 * (the {@code workspace_exec} tool, after each run) can report the files a program created, changed or deleted.
 * Obtained from {@link WorkspaceFS#trackChanges}; the first look is taken when it is created.
 *
 * <p>Its memory is the last state it saw of every file it follows ({@link #trackedEntries()}); {@link #close()}
 * releases it and anything the file system holds for it (watches). Calls may come from any thread, one at a time.
 */
public interface FileChangeTracker extends AutoCloseable {

    /**
     * What changed since the previous call (or since the tracker was created); the state seen now becomes the start
     * of the next call's comparison.
     *
     * @throws IllegalStateException when the tracker is closed
     * @throws CodeExecException     when the workspace cannot be read (gone, busy, backend unavailable)
     */
    FileChanges changes();

    /**
     * Like {@link #changes()}, comparing with {@code takenAfterRun}, the folders' entries as a run listed them when it
     * ended ({@link ListingProgramRunner}), instead of looking at the workspace itself, where the tracker can; the
     * default ignores the snapshot and looks. A tracker that uses it applies the same listing rules and the same limit
     * as a look of its own: an {@linkplain FolderSnapshot#complete() incomplete} snapshot, or one with more entries
     * than the limit, is reported as not compared. A snapshot of other folders than the tracker's is ignored.
     *
     * @param takenAfterRun the folders' entries at the end of the run; null to look
     * @throws IllegalStateException when the tracker is closed
     * @throws CodeExecException     when the workspace cannot be read
     */
    default FileChanges changes(FolderSnapshot takenAfterRun) {
        return changes();
    }

    /** How many files and directories the tracker keeps in memory; 0 when it follows none (too many, or closed). */
    int trackedEntries();

    /** Releases what the tracker holds. Idempotent. */
    @Override
    void close();
}
