package dev.codeexec.kubernetes;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.spi.BytePipe;
import dev.codeexec.spi.IoThreads;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Runs a short pod command whose standard output is read as a stream by the calling thread (a tar archive, a listing)
 * without holding it whole: {@link PodCommands} pushes the output into an {@link OutputStream}, a tar or listing
 * reader pulls from an {@link InputStream}, and a bounded {@link BytePipe} joins them.
 *
 * <p>Thread roles: the command runs on one of the core's I/O threads ({@link IoThreads#IO}) and writes into the pipe;
 * the caller's thread reads it. When the reader stops early the pipe's reading end is closed, the command's further
 * output fails, and the command's own end is awaited; its failure is then the expected consequence, not reported.
 */
final class PodStreams {

    /** Reads a command's output; returns normally when it read all it wanted. */
    @FunctionalInterface
    interface Reader {
        void read(InputStream out) throws IOException;
    }

    /** The end of a streamed command, as seen by the reader. */
    record Outcome(PodCommands.Result result, IOException readFailure) {

        /** True when the command ended with status 0 and the reader did not fail. */
        boolean ok() {
            return result != null && result.exitCode() == 0 && readFailure == null;
        }
    }

    private PodStreams() {
    }

    /**
     * Runs {@code argv} in {@code pod} and hands its standard output to {@code reader} on this thread.
     *
     * @return the command's result (null when the reader stopped before its end and the command broke off because
     *         of that) and the reader's {@link IOException}, if any
     * @throws RuntimeException what the reader threw unchecked (a refusal), or what {@link PodCommands#run} threw
     *                          (the pod is gone, the transport failed) unless the reader had stopped first
     */
    static Outcome run(PodCommands commands, String pod, List<String> argv, Duration timeout, Reader reader) {
        BytePipe pipe = new BytePipe();
        CompletableFuture<PodCommands.Result> command = CompletableFuture.supplyAsync(() -> {
            try {
                PodCommands.Result r = commands.run(pod, argv, null, pipe.out(), timeout);
                IoThreads.closeQuietly(pipe.out());
                return r;
            } catch (RuntimeException e) {
                pipe.fail("the command failed");
                throw e;
            }
        }, IoThreads.IO);
        IOException readFailure = null;
        boolean readAll = false;
        try {
            reader.read(pipe.in());
            readAll = true;
        } catch (IOException e) {
            readFailure = e;
        } finally {
            pipe.closeReader();
        }
        try {
            return new Outcome(command.join(), readFailure);
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                if (readAll) {
                    // The reader stopped before the end: the command's output had nowhere to go.
                    return new Outcome(null, null);
                }
                throw cause;
            }
            throw new CodeExecException("a command in the pod failed", e.getCause());
        }
    }

    /**
     * Runs {@code argv} and collects its standard output, at most {@code limit} bytes.
     *
     * @throws CodeExecException when the command sent more than {@code limit} bytes
     */
    static Collected collect(PodCommands commands, String pod, List<String> argv, InputStream stdin,
                             Duration timeout, int limit) {
        Bounded out = new Bounded(limit);
        PodCommands.Result r = commands.run(pod, argv, stdin, out, timeout);
        if (out.over) {
            throw new CodeExecException("the pod sent more than " + limit + " bytes for a command that prints at most that");
        }
        return new Collected(r, out.toByteArray());
    }

    /** A command's result and its collected standard output. */
    record Collected(PodCommands.Result result, byte[] stdout) {
    }

    /** Keeps at most {@code limit} bytes and remembers that more came. */
    private static final class Bounded extends ByteArrayOutputStream {

        private final int limit;
        private volatile boolean over;

        Bounded(int limit) {
            this.limit = limit;
        }

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            int room = limit - size();
            if (len > room) {
                over = true;
            }
            super.write(b, off, Math.max(0, Math.min(len, room)));
        }
    }
}
