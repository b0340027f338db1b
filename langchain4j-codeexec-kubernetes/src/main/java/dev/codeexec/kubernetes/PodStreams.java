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
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a short pod command whose standard output is read as a stream by the calling thread (a tar archive, a listing)
 * without holding it whole: {@link PodCommands} pushes the output into an {@link OutputStream}, a tar or listing
 * reader pulls from an {@link InputStream}, and a bounded {@link BytePipe} joins them.
 *
 * <p>Thread roles: the command runs on one of the core's I/O threads ({@link IoThreads#IO}) and writes into the pipe;
 * the caller's thread reads it. When the reader refuses the stream or the stream fails, the pipe's reading end is
 * closed, the command's further output fails, and the caller does not wait for it.
 */
final class PodStreams {

    /** Reads a command's output; returns normally when it read all it wanted. */
    @FunctionalInterface
    interface Reader {
        void read(InputStream out) throws IOException;
    }

    /** The end of a streamed command: its result, or the failure of its stream. */
    record Outcome(PodCommands.Result result, IOException readFailure) {
    }

    private PodStreams() {
    }

    /**
     * Runs {@code argv} in {@code pod} and hands its standard output to {@code reader} on this thread. When the
     * reader returns, the rest of the output is read and dropped (a tar archive's end padding, the rest of a listing
     * the visitor stopped), so that the command ends and its status is known.
     *
     * @return the command's result, or (when the reader failed with an {@link IOException} of the stream) no result
     *         and that failure: the command is then left to end on its own, its output going nowhere
     * @throws RuntimeException what the reader threw unchecked (a refusal: the command is left to end on its own),
     *                          or what {@link PodCommands#run} threw (the pod is gone, the transport failed)
     */
    static Outcome run(PodCommands commands, String pod, List<String> argv, Duration timeout, Reader reader) {
        BytePipe pipe = new BytePipe();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CompletableFuture<PodCommands.Result> command = CompletableFuture.supplyAsync(() -> {
            try {
                PodCommands.Result r = commands.run(pod, argv, null, pipe.out(), timeout);
                IoThreads.closeQuietly(pipe.out());
                return r;
            } catch (RuntimeException e) {
                failure.set(e);
                pipe.fail("the command failed");
                throw e;
            }
        }, IoThreads.IO);
        try {
            reader.read(pipe.in());
            pipe.in().transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
            pipe.closeReader();
            RuntimeException f = failure.get();
            if (f != null) {
                throw f;
            }
            return new Outcome(null, e);
        } catch (RuntimeException e) {
            pipe.closeReader();
            throw e;
        }
        try {
            return new Outcome(command.join(), null);
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
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
