package dev.codeexec.spi;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs and sessions over any {@link ProcessChannel}: the one place for stdin feeding, the output cap
 * ({@link BoundedOutput}: the start and the end of each stream, its middle dropped), the streaming listener, the timeout and drain rules and result assembly.
 *
 * <p>Rules of a run:
 * <ul>
 *   <li>stdin is written from an I/O thread and then closed, so a program that does not read it blocks no one;</li>
 *   <li>past the timeout the tree is killed, the run is marked timed out (exit code -1) and what was captured is
 *       returned once the output ended, or after {@link #KILL_DRAIN} at the latest;</li>
 *   <li>after a normal exit the output may take {@link #DRAIN_GRACE} to end (a PID namespace closes the pipes at
 *       once; a leftover background process may hold them open): then the tree is killed, so the call returns
 *       promptly even when a grandchild holds stdout;</li>
 *   <li>an interrupt of the caller kills the tree and throws {@link CodeExecException}.</li>
 * </ul>
 */
public final class ProgramRuns {

    /** How long output may take to end after the program exited before the tree is killed. */
    public static final Duration DRAIN_GRACE = Duration.ofMillis(500);

    /** How long output may take to end after a kill; past it the result is returned without waiting further. */
    public static final Duration KILL_DRAIN = Duration.ofSeconds(2);

    private ProgramRuns() {
    }

    /**
     * Runs a program to completion or timeout.
     *
     * @throws dev.codeexec.engine.BackendUnavailableException when the channel cannot start it
     * @throws CodeExecException                               when the caller was interrupted (the program was killed)
     */
    public static RunResult run(ProcessChannel channel, ProgramLaunch launch) {
        return run(channel, launch, null, null);
    }

    /**
     * Runs a program to completion or timeout; a stream that outgrows the output cap is also given whole to its
     * overflow (null for none), which the caller finishes after the run.
     */
    static RunResult run(ProcessChannel channel, ProgramLaunch launch, BoundedOutput.Overflow outOverflow,
                         BoundedOutput.Overflow errOverflow) {
        long startNanos = System.nanoTime();
        BoundedOutput out = new BoundedOutput(launch.maxOutputBytes(), outOverflow);
        BoundedOutput err = new BoundedOutput(launch.maxOutputBytes(), errOverflow);
        SafeListener listener = new SafeListener(launch.listener());
        ChannelProcess p = channel.start(launch, (stream, b, off, len) -> {
            (stream == StdStream.STDOUT ? out : err).write(b, off, len);
            listener.onOutput(stream, b, off, len);
        });
        feedStdin(p.stdin(), launch.stdin());
        boolean timedOut;
        try {
            timedOut = !awaitOrThrow(p.exit(), launch.timeout());
        } catch (InterruptedException e) {
            p.killTree();
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for the program; it was killed", e);
        }
        if (timedOut) {
            p.killTree();
            IoThreads.await(p.outputEnd(), KILL_DRAIN);
        } else if (!IoThreads.await(p.outputEnd(), DRAIN_GRACE)) {
            p.killTree();
            IoThreads.await(p.outputEnd(), KILL_DRAIN);
        }
        int exitCode = timedOut ? -1 : p.exit().join();
        Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
        return new RunResult(out.text(), err.text(), exitCode, took, timedOut, out.truncated(), err.truncated());
    }

    /**
     * Starts an interactive session; the launch's timeout bounds its life. Output of both streams is kept in one
     * bounded log; stdin stays open until closed.
     *
     * @param id the session id
     */
    public static ProgramSession startSession(ProcessChannel channel, ProgramLaunch launch, String id) {
        return ChannelSession.start(id, channel, launch);
    }

    /** Waits for {@code f} up to {@code max}; true when it completed. */
    private static boolean awaitOrThrow(CompletableFuture<?> f, Duration max) throws InterruptedException {
        try {
            f.get(Math.max(0, max.toNanos()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true;
        }
    }

    private static void feedStdin(OutputStream os, String stdin) {
        if (stdin == null || stdin.isEmpty()) {
            IoThreads.closeQuietly(os);
            return;
        }
        byte[] bytes = stdin.getBytes(StandardCharsets.UTF_8);
        // A separate thread: a program that does not read stdin must not block the caller.
        IoThreads.IO.execute(() -> {
            try (os) {
                os.write(bytes);
            } catch (IOException e) {
                // The program exited or closed stdin without reading it all.
            }
        });
    }
}
