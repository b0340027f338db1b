package dev.codeexec.spi;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The standard input of a program on the far side of a message transport: every write is sent as messages of at
 * most {@link #chunk} bytes ({@link #send}), and {@link #close()} sends the end of file once ({@link #sendEnd}).
 * Writes after the close fail with an {@link IOException}. The core writes from one thread at a time (its I/O
 * thread), so this class takes no lock; {@link #send} may block while the far side does not take the input.
 *
 * <p>A transport whose stream cannot be half-closed arranges the end of file itself (framed input, a close message);
 * {@link #none()} is the input of a run that has none (the program reads {@code /dev/null}).
 */
public abstract class ChunkedStdin extends OutputStream {

    private final int chunk;
    private boolean closed;

    /** @param chunk the most bytes per {@link #send} */
    protected ChunkedStdin(int chunk) {
        if (chunk <= 0) {
            throw new IllegalArgumentException("chunk (" + chunk + ") must be positive");
        }
        this.chunk = chunk;
    }

    /** Sends {@code len} bytes ({@code 0 < len <= chunk}); throws when they cannot be delivered. */
    protected abstract void send(byte[] b, int off, int len) throws IOException;

    /** Sends the end of file. Called once; a failure is the subclass's to log (the program may have ended). */
    protected abstract void sendEnd();

    @Override
    public final void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public final void write(byte[] b, int off, int len) throws IOException {
        if (closed) {
            throw new IOException("stdin is closed");
        }
        for (int i = 0; i < len; i += chunk) {
            send(b, off + i, Math.min(chunk, len - i));
        }
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            sendEnd();
        }
    }

    /** The stdin of a run without input: nothing is ever written, and closing it sends nothing. */
    public static OutputStream none() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("this run has no stdin");
            }

            @Override
            public void close() {
                // Nothing was opened.
            }
        };
    }
}
