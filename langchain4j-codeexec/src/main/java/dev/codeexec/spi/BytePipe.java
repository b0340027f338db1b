package dev.codeexec.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A bounded pipe from a producer thread to a consumer thread: an import walking its source into an HTTP client's
 * upload body (E2B), a command's output pushed by a transport into a tar reader (a pod's file reads). Either side can
 * end it: the producer closes (end of stream) or fails it (the consumer gets an {@link IOException}); the consumer
 * side is closed when the consumer is done, so a producer blocked on a full pipe is released with an
 * {@link IOException}. {@link java.io.PipedInputStream} is not used: it ties each end to the thread that last used
 * it, and HTTP and websocket clients read and write from a pool.
 *
 * <p>Thread roles: one producer writes {@link #out()}; one consumer reads {@link #in()}; {@link #fail} and
 * {@link #closeReader} may be called from any thread. At most 16 chunks of 64 KiB are held.
 */
public final class BytePipe {

    /** An open pipe. */
    public BytePipe() {
    }

    private static final byte[] END = new byte[0];
    private static final int CHUNK = 64 << 10;

    private final BlockingQueue<byte[]> chunks = new ArrayBlockingQueue<>(16);
    private volatile IOException failure;
    private volatile boolean readerClosed;

    private final OutputStream out = new OutputStream() {
        private final byte[] buf = new byte[CHUNK];
        private int n;
        private boolean closed;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (closed) {
                throw new IOException("the pipe is closed");
            }
            while (len > 0) {
                int k = Math.min(len, CHUNK - n);
                System.arraycopy(b, off, buf, n, k);
                n += k;
                off += k;
                len -= k;
                if (n == CHUNK) {
                    flush();
                }
            }
        }

        @Override
        public void flush() throws IOException {
            if (n > 0) {
                put(java.util.Arrays.copyOf(buf, n));
                n = 0;
            }
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                flush();
                closed = true;
                put(END);
            }
        }
    };

    private final InputStream in = new InputStream() {
        private byte[] current = new byte[0];
        private int pos;
        private boolean ended;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            while (pos == current.length) {
                if (ended) {
                    return -1;
                }
                byte[] next;
                try {
                    next = chunks.poll(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
                if (failure != null) {
                    throw failure;
                }
                if (next == null) {
                    continue;
                }
                if (next == END) {
                    ended = true;
                    return -1;
                }
                current = next;
                pos = 0;
            }
            int k = Math.min(len, current.length - pos);
            System.arraycopy(current, pos, b, off, k);
            pos += k;
            return k;
        }

        @Override
        public void close() {
            readerClosed = true;
        }
    };

    private void put(byte[] chunk) throws IOException {
        try {
            while (!chunks.offer(chunk, 1, TimeUnit.SECONDS)) {
                if (readerClosed) {
                    throw new IOException("the reader of the pipe stopped reading");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
        if (readerClosed && chunk != END) {
            throw new IOException("the reader of the pipe stopped reading");
        }
    }

    /** The producer's end; closing it ends the stream. */
    public OutputStream out() {
        return out;
    }

    /** The consumer's end. */
    public InputStream in() {
        return in;
    }

    /** Aborts the stream: the consumer gets an {@link IOException} naming {@code why}. */
    public void fail(String why) {
        failure = new IOException(why);
        chunks.offer(END);
    }

    /** The consumer is done (or failed): the producer's writes fail from now on. */
    public void closeReader() {
        readerClosed = true;
        chunks.clear();
    }
}
