package dev.codeexec.e2b;

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
 * {@link E2bEngine}'s runner: the engine's own, which, when a change report is asked
 * ({@link #runProgramAndList}), has the run's PID 1 list the folders once the program ended
 * ({@link SandboxScripts#NS_INIT}), in the same {@code Process/Start} stream, so that the report costs no ListDir.
 * The engine's preparation of that run takes the listing from this thread ({@link #take()}). Modification times keep
 * nanoseconds, as envd's Stat and ListDir report them.
 */
final class E2bListingRunner implements ListingProgramRunner {

    private final ProgramRunner engineRunner;
    /** The listing of the run being prepared on this thread. */
    private final ThreadLocal<RunListing> asked = new ThreadLocal<>();

    E2bListingRunner(ProgramRunner engineRunner) {
        this.engineRunner = engineRunner;
    }

    @Override
    public RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        return engineRunner.runProgram(ws, spec);
    }

    @Override
    public ListedRun runProgramAndList(Workspace ws, RunProgramSpec spec, List<String> folders, int maxEntries) {
        RunListing listing = new RunListing(folders, maxEntries, ChronoUnit.NANOS);
        asked.set(listing);
        try {
            RunResult result = engineRunner.runProgram(ws, spec);
            return new ListedRun(result, listing.snapshot(result.exitCode(), !result.timedOut()));
        } finally {
            asked.remove();
        }
    }

    /** The listing the run prepared now on this thread is to make, handed out once; null for none. */
    RunListing take() {
        RunListing l = asked.get();
        asked.remove();
        return l;
    }
}
