package dev.codeexec.spi;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The one output limiter: keeps the start and the end of a stream within {@code cap} bytes and counts what it drops
 * from the middle, so memory stays bounded whatever a program prints and the last lines (a test run's summary, the
 * error that ended a build) are never lost. {@link ProgramRuns} applies it to every run; a backend that captures
 * output outside a {@link ProcessChannel} (a kernel's stream messages, say) uses it too. Thread-safe.
 *
 * <p>The first {@code cap - cap / 2} bytes are the head; the last {@code cap / 2} bytes are kept in a ring that
 * always holds the real end of the stream. Bytes between them are dropped and counted, and {@link #text()} marks the
 * place with {@link #middleMarker(long)}. An optional {@link Overflow} receives the whole stream once it outgrows the
 * cap (everything written so far, then every later byte), so that an engine can save it to a file.
 *
 * <p>Memory: a small buffer serves the common case of little output; a stream that outgrows it gets one head buffer
 * and, once the head is full, one ring: at most {@code cap} bytes in all, however much is written.
 */
public final class BoundedOutput {

    /** {@value} bytes: the default cap per stream (1 MiB). */
    public static final int DEFAULT_CAP = 1 << 20;

    private static final int INITIAL = 8192;

    /**
     * Receives the whole stream of a {@link BoundedOutput} once it outgrows its cap. Called under the output's lock,
     * from the writer's thread, in stream order; it must not throw (it records its own failures) and must not call
     * back into the output.
     */
    @FunctionalInterface
    public interface Overflow {

        /** Bytes of the stream, in order; the array may be reused after the call. */
        void write(byte[] bytes, int offset, int length);
    }

    private final int headCap;
    private final int tailCap;
    private final Overflow overflow;
    private byte[] head;
    private int headSize;
    /** The ring of the last bytes after the head; null until the head is full. */
    private byte[] ring;
    private int ringStart;
    private int ringSize;
    private long total;
    private boolean overflowing;

    /**
     * @param cap bytes to keep; must be positive
     */
    public BoundedOutput(int cap) {
        this(cap, null);
    }

    /**
     * @param cap      bytes to keep; must be positive
     * @param overflow receives the whole stream once it is longer than {@code cap}; null for none
     */
    public BoundedOutput(int cap, Overflow overflow) {
        if (cap <= 0) {
            throw new IllegalArgumentException("cap (" + cap + ") must be positive");
        }
        this.tailCap = cap / 2;
        this.headCap = cap - tailCap;
        this.overflow = overflow;
        this.head = new byte[Math.min(headCap, INITIAL)];
    }

    /** Appends bytes; when the stream outgrows the cap, bytes leave the middle (the head and the end stay). */
    public synchronized void write(byte[] b, int off, int len) {
        if (len <= 0) {
            return;
        }
        if (overflow != null) {
            if (!overflowing && total + len > (long) headCap + tailCap) {
                overflowing = true;
                // Nothing was dropped yet: the head and the ring hold the whole stream so far.
                overflow.write(head, 0, headSize);
                if (ringSize > 0) {
                    int first = Math.min(ringSize, ring.length - ringStart);
                    overflow.write(ring, ringStart, first);
                    overflow.write(ring, 0, ringSize - first);
                }
            }
            if (overflowing) {
                overflow.write(b, off, len);
            }
        }
        total += len;
        int toHead = Math.min(len, headCap - headSize);
        if (toHead > 0) {
            if (headSize + toHead > head.length) {
                head = Arrays.copyOf(head, headCap);
            }
            System.arraycopy(b, off, head, headSize, toHead);
            headSize += toHead;
        }
        int rest = len - toHead;
        if (rest > 0 && tailCap > 0) {
            toRing(b, off + toHead, rest);
        }
    }

    /** Appends to the ring, overwriting its oldest bytes when full. */
    private void toRing(byte[] b, int off, int len) {
        if (ring == null) {
            ring = new byte[tailCap];
        }
        if (len >= tailCap) {
            System.arraycopy(b, off + len - tailCap, ring, 0, tailCap);
            ringStart = 0;
            ringSize = tailCap;
            return;
        }
        int end = (ringStart + ringSize) % tailCap;
        int first = Math.min(len, tailCap - end);
        System.arraycopy(b, off, ring, end, first);
        System.arraycopy(b, off + first, ring, 0, len - first);
        int over = ringSize + len - tailCap;
        if (over > 0) {
            ringStart = (ringStart + over) % tailCap;
            ringSize = tailCap;
        } else {
            ringSize += len;
        }
    }

    /** True when bytes were dropped. */
    public synchronized boolean truncated() {
        return dropped() > 0;
    }

    /** Bytes dropped from the middle. */
    public synchronized long droppedBytes() {
        return dropped();
    }

    /** Bytes written in all, kept or not. */
    public synchronized long totalBytes() {
        return total;
    }

    private long dropped() {
        return total - headSize - ringSize;
    }

    /** The kept bytes: the head, then the end of the stream (without a marker between them). */
    public synchronized byte[] bytes() {
        byte[] out = Arrays.copyOf(head, headSize + ringSize);
        copyRing(out, headSize);
        return out;
    }

    /** Bytes the buffers take now (for tests of memory). */
    synchronized int bufferBytes() {
        return head.length + (ring == null ? 0 : ring.length);
    }

    private void copyRing(byte[] dest, int at) {
        if (ringSize > 0) {
            int first = Math.min(ringSize, ring.length - ringStart);
            System.arraycopy(ring, ringStart, dest, at, first);
            System.arraycopy(ring, 0, dest, at + first, ringSize - first);
        }
    }

    /**
     * The kept bytes as UTF-8 text (malformed sequences replaced). When bytes were dropped, the head is followed by a
     * marker line ({@link #middleMarker}) and then the end of the stream; a stream cut with no room for an end (a cap
     * of one byte) ends with {@link #marker}. A multi-byte character cut by the head's end or the end's start is left
     * out of the text (and counted in the marker) rather than shown as a broken character.
     */
    public synchronized String text() {
        long dropped = dropped();
        if (dropped == 0) {
            return new String(bytes(), StandardCharsets.UTF_8);
        }
        int keep = completeUtf8Length(head, headSize);
        String headText = new String(head, 0, keep, StandardCharsets.UTF_8);
        String sep = keep == 0 || head[keep - 1] == '\n' ? "" : "\n";
        byte[] tail = new byte[ringSize];
        copyRing(tail, 0);
        int skip = 0;
        while (skip < tail.length && skip < 3 && (tail[skip] & 0xC0) == 0x80) {
            skip++; // continuation bytes of a character whose start was dropped
        }
        long shownDropped = dropped + (headSize - keep) + skip;
        if (tail.length == 0) {
            return headText + sep + marker(shownDropped);
        }
        return headText + sep + middleMarker(shownDropped) + "\n"
                + new String(tail, skip, tail.length - skip, StandardCharsets.UTF_8);
    }

    /**
     * The length of {@code b[0..len)} without a multi-byte UTF-8 character that is cut off at its end. Bytes that are
     * not valid UTF-8 anyway are kept (they decode to replacement characters as before).
     */
    static int completeUtf8Length(byte[] b, int len) {
        for (int i = len - 1; i >= 0 && i >= len - 4; i--) {
            int c = b[i] & 0xff;
            if ((c & 0xC0) == 0x80) {
                continue; // a continuation byte: look further back for the lead byte
            }
            int need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
            return i + need > len ? i : len;
        }
        return len;
    }

    /** The marker of output cut at its end: {@code [output truncated: N bytes dropped]}. */
    public static String marker(long droppedBytes) {
        return "[output truncated: " + droppedBytes + " bytes dropped]";
    }

    /**
     * The marker between the head and the end of a stream whose middle was dropped:
     * {@code [output truncated: N bytes dropped here; the end of the output follows]}.
     */
    public static String middleMarker(long droppedBytes) {
        return "[output truncated: " + droppedBytes + " bytes dropped here; the end of the output follows]";
    }
}
