package dev.codeexec.container;

import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.spi.RunListing;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * The runner of a {@link ContainerEngine}: the engine's own, and, for a change report, a run whose wrapper lists the
 * folders once the program ended ({@link ExecScripts#RUN}), so that the report needs no archive request. The listing
 * is handed to the engine's planning of the same run, on the same thread ({@link #claim()}).
 *
 * <p>Modification times are cut to seconds, as Docker's archives give them, so that a listing and a look at the same
 * files agree.
 */
final class ListingRunner implements ListingProgramRunner {

    private final ProgramRunner runner;
    private final ThreadLocal<RunListing> pending = new ThreadLocal<>();

    ListingRunner(ProgramRunner runner) {
        this.runner = runner;
    }

    @Override
    public RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        return runner.runProgram(ws, spec);
    }

    @Override
    public ListedRun runProgramAndList(Workspace ws, RunProgramSpec spec, List<String> folders, int maxEntries) {
        RunListing listing = new RunListing(folders, maxEntries, ChronoUnit.SECONDS);
        pending.set(listing);
        RunResult r;
        try {
            r = runner.runProgram(ws, spec);
        } finally {
            pending.remove();
        }
        return new ListedRun(r, listing.snapshot(r.exitCode(), !r.timedOut()));
    }

    /** The listing the run being planned on this thread makes, once; null for none. */
    RunListing claim() {
        RunListing l = pending.get();
        pending.remove();
        return l;
    }
}
