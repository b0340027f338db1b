package dev.codeexec.engine;

import java.time.Duration;
import java.util.Optional;

/**
 * A program started by {@link InteractiveProgramRunner}. Thread-safe. Output of both streams is kept in one bounded
 * buffer, addressed by byte offsets from the start of the session; output older than the buffer is dropped and
 * reported.
 */
public interface ProgramSession extends AutoCloseable {

    /** The session id, unique within the engine. */
    String id();

    /** Output from {@code offset} on (at most {@code maxBytes}), and whether the program still runs. */
    ProgramPoll poll(long offset, int maxBytes);

    /**
     * Waits up to {@code wait} for the program to exit, then polls. Returns early when it exits.
     */
    ProgramPoll await(Duration wait, long offset, int maxBytes);

    /**
     * Writes to the program's standard input. The write is bounded in time: a program that does not read its input
     * cannot block the caller (the host backends wait at most 5 seconds, then drop the rest).
     *
     * @throws InvalidSpecException when the program has exited, its stdin was closed, or it is not reading its
     *                              standard input
     */
    void write(String data, boolean newline);

    /** Closes the program's standard input (end of file). */
    void closeStdin();

    /** Sends SIGTERM to the whole tree, waits up to {@code grace}, then kills it. Returns once it is gone. */
    void kill(Duration grace);

    /** The exit code once the program has exited. */
    Optional<Integer> exitCode();

    /** Kills the program if it still runs and releases the session. Idempotent. */
    @Override
    void close();
}
