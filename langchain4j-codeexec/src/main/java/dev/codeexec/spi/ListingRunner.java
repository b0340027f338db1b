package dev.codeexec.spi;

import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;

/**
 * The runner of a remote engine whose run wrapper can list folders once the program ended ({@link RunListing}): the
 * engine's own runner for plain runs and, for a change report ({@link #runProgramAndList}), the same run with a
 * listing asked for. The engine's preparation of that run, on the same thread, takes the listing with
 * {@link #claim()} and builds it into the run's wrapper and output filter; the snapshot then comes from the run's own
 * output, so the report costs no file-system request.
 *
 * <p>The hand-over is a thread-local: a run is prepared on the thread that calls the runner, and a listing is claimed
 * at most once, so a nested or later run on that thread never takes another run's listing.
 */
public final class ListingRunner implements ListingProgramRunner {

    private final ProgramRunner runner;
    private final ChronoUnit precision;
    /** The listing of the run being prepared on this thread. */
    private final ThreadLocal<RunListing> asked = new ThreadLocal<>();

    /**
     * @param runner    the engine's own runner, which calls {@link #claim()} while preparing each run
     * @param precision what the backend's own file listings keep of modification times (Docker's archives: seconds;
     *                  envd: nanoseconds), so that a run's listing and a look at the same files agree
     */
    public ListingRunner(ProgramRunner runner, ChronoUnit precision) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.precision = Objects.requireNonNull(precision, "precision");
    }

    @Override
    public RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        return runner.runProgram(ws, spec);
    }

    @Override
    public ListedRun runProgramAndList(Workspace ws, RunProgramSpec spec, List<String> folders, int maxEntries) {
        RunListing listing = new RunListing(folders, maxEntries, precision);
        asked.set(listing);
        try {
            RunResult result = runner.runProgram(ws, spec);
            return new ListedRun(result, listing.snapshot(result.exitCode(), !result.timedOut()));
        } finally {
            asked.remove();
        }
    }

    /** The listing the run being prepared on this thread is to make, handed out once; null for none. */
    public RunListing claim() {
        RunListing l = asked.get();
        asked.remove();
        return l;
    }
}
