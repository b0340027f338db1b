package dev.codeexec.engine;

/**
 * A view of a {@link ProgramSession}'s output.
 *
 * @param output       the bytes from {@code offset} to {@code nextOffset}, decoded as UTF-8
 * @param offset       where this window starts (later than requested when older output was dropped)
 * @param nextOffset   where the next poll should start
 * @param droppedBytes bytes between the requested offset and {@code offset} that were dropped from the buffer
 * @param running      true while the program runs
 * @param exitCode     the exit code once exited, else null
 * @param timedOut     true when the session's timeout killed it
 */
public record ProgramPoll(String output, long offset, long nextOffset, long droppedBytes, boolean running,
                          Integer exitCode, boolean timedOut) {
}
