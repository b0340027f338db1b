package dev.codeexec.spi;

import dev.codeexec.engine.ProgramPoll;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The output of an interactive session: the most recent {@code capacity} bytes of both streams, addressed by
 * absolute offsets since the session started. Older bytes are dropped and reported by {@link #read}. Thread-safe.
 *
 * <p>Memory follows the output, not the capacity: the buffer starts small and doubles as output arrives, becoming a
 * ring of {@code capacity} bytes only once that much was written, and {@link #trimToSize()} (when the program's output
 * has ended) gives back what the output did not use. A session that printed a line holds a few kilobytes, also after
 * its program exited, until it is closed.
 */
final class SessionLog {

    /** {@value} bytes: the first buffer. */
    static final int INITIAL = 4096;

    private final int capacity;
    /**
     * Byte {@code pos} of the output is at {@code ring[pos % ring.length]} for the last {@code ring.length} positions.
     * Shorter than {@code capacity} only while it has not wrapped ({@code written <= ring.length}).
     */
    private byte[] ring;
    private long written;

    SessionLog(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity (" + capacity + ") must be positive");
        }
        this.capacity = capacity;
        this.ring = new byte[Math.min(capacity, INITIAL)];
    }

    synchronized void write(byte[] b, int off, int len) {
        if (len <= 0) {
            return;
        }
        if (len > capacity) {
            // Only the last `capacity` bytes can be kept: the rest counts as written and dropped at once.
            written += len - capacity;
            off += len - capacity;
            len = capacity;
        }
        if (ring.length < capacity && written + len > ring.length) {
            // Not wrapped yet, so the bytes are at [0, written): a longer copy keeps every position in place.
            long grown = Math.max(written + len, 2L * Math.max(1, ring.length));
            ring = Arrays.copyOf(ring, (int) Math.min(capacity, grown));
        }
        int pos = (int) (written % ring.length);
        int first = Math.min(len, ring.length - pos);
        System.arraycopy(b, off, ring, pos, first);
        System.arraycopy(b, off + first, ring, 0, len - first);
        written += len;
    }

    /**
     * Gives back the part of the buffer the output did not fill; for when no more output will come (a later write
     * grows it again).
     */
    synchronized void trimToSize() {
        if (written < ring.length) {
            ring = Arrays.copyOf(ring, (int) written);
        }
    }

    /** Bytes the buffer takes now (for tests of its memory). */
    synchronized int bufferBytes() {
        return ring.length;
    }

    private byte at(long pos) {
        return ring[(int) (pos % ring.length)];
    }

    synchronized long size() {
        return written;
    }

    /** A window from {@code offset}, at most {@code maxBytes}; the poll's status fields are filled by the caller. */
    synchronized ProgramPoll read(long offset, int maxBytes, boolean running, Integer exitCode, boolean timedOut) {
        long oldest = Math.max(0, written - ring.length);
        long requested = Math.max(0, offset);
        long from = Math.min(Math.max(requested, oldest), written);
        if (from > requested) {
            // The ring dropped the start of a character: its remaining bytes are dropped too, not shown broken.
            for (int i = 0; i < 3 && from < written && (at(from) & 0xC0) == 0x80; i++) {
                from++;
            }
        }
        int len = (int) Math.min(Math.max(0, maxBytes), written - from);
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            out[i] = at(from + i);
        }
        boolean more = from + len < written;
        if (more || running) {
            // A character cut at the window's end is returned whole by the next poll. A window too small for one
            // character is returned as is, so a poller always makes progress.
            int whole = BoundedOutput.completeUtf8Length(out, len);
            if (whole > 0 || !more) {
                out = Arrays.copyOf(out, whole);
                len = whole;
            }
        }
        long dropped = Math.max(0, from - requested);
        return new ProgramPoll(new String(out, StandardCharsets.UTF_8), from, from + len, dropped, running, exitCode,
                timedOut);
    }
}
