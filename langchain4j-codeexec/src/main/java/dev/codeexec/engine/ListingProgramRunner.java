package dev.codeexec.engine;

import java.util.List;

/**
 * A {@link ProgramRunner} that can also list folders of the workspace at the end of the same run, so that a caller
 * reporting what a run changed ({@link FileChangeTracker#changes(FolderSnapshot)}) needs no request of its own to the
 * backend. Offered by remote backends whose file listings cost a round trip.
 */
public interface ListingProgramRunner extends ProgramRunner {

    /**
     * Runs one program like {@link #runProgram}, then lists {@code folders} once the program and every process it
     * started have ended. The program's output, the output cap and the output listener see only what the program
     * wrote, never the listing.
     *
     * @param folders    workspace-relative folders; one that does not exist holds nothing
     * @param maxEntries the most entries listed; past it the listing is {@linkplain FolderSnapshot#complete()
     *                   incomplete}
     * @throws CodeExecException as {@link #runProgram} does
     */
    ListedRun runProgramAndList(Workspace ws, RunProgramSpec spec, List<String> folders, int maxEntries);
}
