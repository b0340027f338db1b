package dev.codeexec.process;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The one output limiter: keeps the first {@code cap} bytes of a stream and counts the rest, so memory stays bounded
 * whatever a program prints. Thread-safe.
 *
 * <p>Memory: a small buffer serves the common case of little output; a stream that outgrows it gets one buffer of
 * the full cap (plus room for the truncation marker), so a flooded stream costs the cap once, not a chain of
 * doubling copies, and {@link #text()} decodes it in one pass without concatenation.
 */
public final class BoundedOutput {

    /** {@value} bytes: the default cap per stream (1 MiB). */
    public static final int DEFAULT_CAP = 1 << 20;

    private static final int INITIAL = 8192;
    private static final int MARKER_ROOM = 64;

    private final int cap;
    private byte[] buf;
    private int size;
    private long dropped;

    /**
     * @param cap bytes to keep; must be positive
     */
    public BoundedOutput(int cap) {
        if (cap <= 0) {
            throw new IllegalArgumentException("cap (" + cap + ") must be positive");
        }
        this.cap = cap;
        this.buf = new byte[Math.min(cap, INITIAL)];
    }

    /** Appends bytes; whatever exceeds the cap is counted and dropped. */
    public synchronized void write(byte[] b, int off, int len) {
        int keep = Math.max(0, Math.min(len, cap - size));
        if (keep > 0) {
            if (size + keep > buf.length) {
                buf = Arrays.copyOf(buf, cap + MARKER_ROOM);
            }
            System.arraycopy(b, off, buf, size, keep);
            size += keep;
        }
        dropped += len - keep;
    }

    /** True when bytes were dropped. */
    public synchronized boolean truncated() {
        return dropped > 0;
    }

    /** Bytes dropped past the cap. */
    public synchronized long droppedBytes() {
        return dropped;
    }

    /** The kept bytes. */
    public synchronized byte[] bytes() {
        return Arrays.copyOf(buf, size);
    }

    /**
     * The kept bytes as UTF-8 text (malformed sequences replaced), followed by a marker line
     * {@code [output truncated: N bytes dropped]} when bytes were dropped.
     */
    public synchronized String text() {
        if (dropped == 0) {
            return new String(buf, 0, size, StandardCharsets.UTF_8);
        }
        byte[] marker = ((size == 0 || buf[size - 1] == '\n' ? "" : "\n") + marker(dropped))
                .getBytes(StandardCharsets.US_ASCII);
        if (buf.length < size + marker.length) {
            buf = Arrays.copyOf(buf, size + marker.length);
        }
        // The marker is written after the kept bytes (not counted in size), so one decode yields the whole text.
        System.arraycopy(marker, 0, buf, size, marker.length);
        return new String(buf, 0, size + marker.length, StandardCharsets.UTF_8);
    }

    /** The marker appended to truncated text. */
    public static String marker(long droppedBytes) {
        return "[output truncated: " + droppedBytes + " bytes dropped]";
    }
}
