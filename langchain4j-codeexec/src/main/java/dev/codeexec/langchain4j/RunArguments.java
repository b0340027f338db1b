package dev.codeexec.langchain4j;

import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.time.Duration;

/** Argument rules shared by the tools that run programs: time limits, output waits, input sizes. */
final class RunArguments {

    /** Most characters of standard input one call may send ({@code stdin}, {@code chars}). */
    static final int MAX_STDIN_CHARS = 1024 * 1024;

    /** Longest wait for a background session's output one call may ask for. */
    private static final long MAX_YIELD_MILLIS = 30_000;

    private RunArguments() {
    }

    /**
     * The time limit from {@code timeout_seconds} (aliases {@code timeout}, {@code timeout_sec}): 1 to the configured
     * maximum; absent, the default, or for a background session the maximum (its whole life).
     */
    static Duration timeout(ToolArguments args, ToolSettings settings, boolean background) {
        Long seconds = args.integer("timeout_seconds", "timeout", "timeout_sec");
        long max = settings.maxTimeout().toSeconds();
        if (seconds == null) {
            return background ? settings.maxTimeout() : settings.defaultTimeout();
        }
        if (seconds < 1 || seconds > max) {
            throw new InvalidArgument("'timeout_seconds' (" + seconds + ") must be between 1 and " + max);
        }
        return Duration.ofSeconds(seconds);
    }

    /** How long to wait for a session's output, from {@code yield_ms} (alias {@code yield_time_ms}). */
    static Duration yield(ToolArguments args, ToolSettings settings) {
        Long millis = args.integer("yield_ms", "yield_time_ms");
        if (millis == null) {
            return settings.sessionYield();
        }
        if (millis < 0 || millis > MAX_YIELD_MILLIS) {
            throw new InvalidArgument("'yield_ms' (" + millis + ") must be between 0 and " + MAX_YIELD_MILLIS);
        }
        return Duration.ofMillis(millis);
    }
}
