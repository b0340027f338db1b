package dev.codeexec.governance;

import java.util.Locale;

/** How a run ended, in an {@link ExecutionEvent.RunFinished}; also the {@code outcome} tag of the run metrics. */
public enum RunOutcome {

    /** The program exited with 0. */
    SUCCESS,
    /** The program exited with another code (a result, not a failure of the runtime). */
    NON_ZERO_EXIT,
    /** The time limit expired and the program's process tree was killed. */
    TIMED_OUT,
    /** The program could not be run: the engine failed, the workspace was gone, a limit could not be enforced. */
    FAILED;

    /** The lower-case name, for example {@code non_zero_exit}: the value of metric tags and audit lines. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
