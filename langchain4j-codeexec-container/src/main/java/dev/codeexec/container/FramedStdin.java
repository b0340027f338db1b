package dev.codeexec.container;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Standard input of an exec with a real end of file. docker-java's attach cannot half-close the connection, so a
 * closed {@code OutputStream} would never reach the program as end of file. Instead every write becomes a frame
 * ({@code <length>\n} and the bytes) and {@link #close()} sends {@code 0\n}; the run's wrapper
 * ({@link ExecScripts#RUN}) decodes the frames into a FIFO the program reads, and closes it at {@code 0\n}.
 *
 * <p>{@linkplain #raw() Raw}, for a long-lived program that never needs an end of file (the workspace's Python
 * kernel, whose relay is stopped by a kill): the bytes go unframed, {@link #close()} only ends the sending, and the
 * wrapper ({@link ExecScripts#RUN_RAW_STDIN}) copies them with one {@code cat}. The frames' decoder starts a
 * {@code head} per write, which costs a process per write and stops at the container's pids limit (a cell's fork
 * loop would end the kernel's input); one {@code cat}, started with the program, forks nothing afterwards.
 *
 * <p>The {@link #input()} side is what docker-java pumps into the connection from its own thread. Writes block while
 * the queue is full (the program does not read), until {@link #kill()} when the program ended.
 *
 * <p>That pump thread is docker-java's, and it turns any failure to write (the program ended without reading its
 * input, the connection closed at the end of the run, or broke) into an uncaught exception, which the JVM's default
 * handler prints. A program may end at any moment while input is on its way, so such a failure is expected, not a
 * fault: the first read on the pump thread gives it a handler that logs the failure at DEBUG. A lost connection is
 * reported through the output stream's end (see {@link ExecChannel}), never through this thread.
 */
final class FramedStdin extends OutputStream {

    private static final byte[] END = new byte[0];

    private final BlockingQueue<byte[]> queue = new ArrayBlockingQueue<>(64);
    private final boolean framed;
    private volatile boolean closed;
    private volatile boolean dead;
    private final InputStream input = new Input();

    /** Framed input with an end of file ({@link ExecScripts#RUN}'s). */
    FramedStdin() {
        this(true);
    }

    private FramedStdin(boolean framed) {
        this.framed = framed;
    }

    /** Raw input without an end of file ({@link ExecScripts#RUN_RAW_STDIN}'s): each write's bytes as they are. */
    static FramedStdin raw() {
        return new FramedStdin(false);
    }

    /** What docker-java reads and sends to the exec. */
    InputStream input() {
        return input;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        if (closed || dead) {
            throw new IOException("stdin is closed");
        }
        if (len == 0) {
            return;
        }
        if (!framed) {
            byte[] copy = new byte[len];
            System.arraycopy(b, off, copy, 0, len);
            put(copy);
            return;
        }
        byte[] head = (len + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] frame = new byte[head.length + len];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(b, off, frame, head.length, len);
        put(frame);
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (!dead) {
            if (framed) {
                put("0\n".getBytes(StandardCharsets.US_ASCII));
            }
            put(END);
        }
    }

    /** The program ended: writers fail, the reader side ends. */
    void kill() {
        dead = true;
        queue.clear();
        queue.offer(END);
    }

    private void put(byte[] frame) throws IOException {
        try {
            while (!queue.offer(frame, 100, TimeUnit.MILLISECONDS)) {
                if (dead) {
                    throw new IOException("the program ended");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing stdin");
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(FramedStdin.class);

    private static void pumpFailed(Thread t, Throwable e) {
        LOG.debug("stdin of a run was not delivered in full ({}): the run ended or its connection closed",
                e.getCause() != null ? e.getCause().toString() : e.toString());
    }

    private final class Input extends InputStream {
        private byte[] current;
        private int pos;
        private Thread pump;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (dead) {
                // The program ended: nothing more is delivered, even a frame a writer racing kill() queued after it.
                return -1;
            }
            if (pump != Thread.currentThread()) {
                pump = Thread.currentThread();
                pump.setUncaughtExceptionHandler(FramedStdin::pumpFailed);
            }
            if (current == null || pos == current.length) {
                if (current == END) {
                    return -1;
                }
                try {
                    current = queue.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return -1;
                }
                pos = 0;
                if (current == END) {
                    queue.offer(END);
                    return -1;
                }
            }
            int n = Math.min(len, current.length - pos);
            System.arraycopy(current, pos, b, off, n);
            pos += n;
            return n;
        }
    }
}
