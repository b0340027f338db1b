package dev.codeexec.testing;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * What the test logger prints while a test provokes a failure on purpose (a listener that throws, an engine that
 * breaks): the test asserts those lines, stack traces included, instead of leaving them in the build log, where they
 * look like failures. The test logger (slf4j-simple) writes to {@link System#err} as it is at each call, so the
 * capture swaps that stream for the block's duration; other threads logging meanwhile are captured too.
 *
 * <pre>{@code
 * try (ExpectedLog log = ExpectedLog.capture()) {
 *     ... provoke the failure ...
 *     assertThat(log.text()).contains("output listener threw");
 * }
 * }</pre>
 */
public final class ExpectedLog implements AutoCloseable {

    private final PrintStream original;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    private ExpectedLog() {
        this.original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    /** Starts capturing; close to restore the stream. */
    public static ExpectedLog capture() {
        return new ExpectedLog();
    }

    /** What was logged so far. */
    public String text() {
        System.err.flush();
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
