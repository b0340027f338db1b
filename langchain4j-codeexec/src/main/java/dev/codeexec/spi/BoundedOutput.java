package dev.codeexec.spi;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The one output limiter: keeps the first {@code cap} bytes of a stream and counts the rest, so memory stays bounded
 * whatever a program prints. {@link ProgramRuns} applies it to every run; a backend that captures output outside a
 * {@link ProcessChannel} (a kernel's stream messages, say) uses it too. Thread-safe.
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
     * {@code [output truncated: N bytes dropped]} when bytes were dropped. When the cap cut a multi-byte character,
     * its first bytes are left out of the text (and counted in the marker) rather than shown as a broken character.
     */
    public synchronized String text() {
        if (dropped == 0) {
            return new String(buf, 0, size, StandardCharsets.UTF_8);
        }
        int keep = completeUtf8Length(buf, size);
        String m = (keep == 0 || buf[keep - 1] == '\n' ? "" : "\n") + marker(dropped + size - keep);
        if (keep < size) {
            // Rare: the cap cut a multi-byte character. Its first bytes stay in bytes() but not in the text.
            return new String(buf, 0, keep, StandardCharsets.UTF_8) + m;
        }
        byte[] marker = m.getBytes(StandardCharsets.US_ASCII);
        if (buf.length < size + marker.length) {
            buf = Arrays.copyOf(buf, size + marker.length);
        }
        // The marker is written after the kept bytes (not counted in size), so one decode yields the whole text.
        System.arraycopy(marker, 0, buf, size, marker.length);
        return new String(buf, 0, size + marker.length, StandardCharsets.UTF_8);
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

    /** The marker appended to truncated text. */
    public static String marker(long droppedBytes) {
        return "[output truncated: " + droppedBytes + " bytes dropped]";
    }
}
