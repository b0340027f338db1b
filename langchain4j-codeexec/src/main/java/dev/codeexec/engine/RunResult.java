package dev.codeexec.engine;

import java.time.Duration;

/**
 * The outcome of a program run. A non-zero exit or a timeout is a result, not an exception.
 *
 * @param stdout          captured standard output (UTF-8, malformed bytes replaced), at most the byte cap: when
 *                        longer, its start, a marker line saying how many bytes were dropped, and its end
 * @param stderr          captured standard error, likewise
 * @param exitCode        the program's exit code; 128+N when killed by signal N; -1 when it timed out before
 *                        exiting by itself
 * @param duration        wall-clock time from start to the end of output collection
 * @param timedOut        true when the timeout expired and the process tree was killed
 * @param stdoutTruncated true when stdout exceeded the cap and its middle was dropped
 * @param stderrTruncated true when stderr exceeded the cap and its middle was dropped
 * @param stdoutFile      where the whole stdout was saved when it exceeded the cap; null when it fit, or when the
 *                        engine saves no output (see {@link SavedOutput})
 * @param stderrFile      likewise for stderr
 */
public record RunResult(String stdout, String stderr, int exitCode, Duration duration, boolean timedOut,
                        boolean stdoutTruncated, boolean stderrTruncated, SavedOutput stdoutFile,
                        SavedOutput stderrFile) {

    /** A result without saved output files. */
    public RunResult(String stdout, String stderr, int exitCode, Duration duration, boolean timedOut,
                     boolean stdoutTruncated, boolean stderrTruncated) {
        this(stdout, stderr, exitCode, duration, timedOut, stdoutTruncated, stderrTruncated, null, null);
    }

    public RunResult {
        stdout = stdout == null ? "" : stdout;
        stderr = stderr == null ? "" : stderr;
        duration = duration == null ? Duration.ZERO : duration;
    }

    /** This result with the files where the whole streams were saved (null for a stream with none). */
    public RunResult withSavedOutput(SavedOutput stdoutFile, SavedOutput stderrFile) {
        return new RunResult(stdout, stderr, exitCode, duration, timedOut, stdoutTruncated, stderrTruncated,
                stdoutFile, stderrFile);
    }

    /** True when the program exited with 0 and did not time out. */
    public boolean succeeded() {
        return exitCode == 0 && !timedOut;
    }

    /** True when either stream was truncated. */
    public boolean truncated() {
        return stdoutTruncated || stderrTruncated;
    }
}
