package dev.codeexec.jupyter;

import java.nio.charset.StandardCharsets;

/**
 * The last {@code capacity} bytes of a stream (a relayed kernel's stderr, which carries the kernel's own output): a
 * ring, so a kernel that prints without end costs a fixed amount of memory. Thread-safe (synchronized).
 */
final class LogTail {

    private final byte[] ring;
    private long written;

    LogTail(int capacity) {
        this.ring = new byte[capacity];
    }

    synchronized void write(byte[] b, int off, int len) {
        if (len > ring.length) {
            written += len - ring.length;
            off += len - ring.length;
            len = ring.length;
        }
        int pos = (int) (written % ring.length);
        int first = Math.min(len, ring.length - pos);
        System.arraycopy(b, off, ring, pos, first);
        System.arraycopy(b, off + first, ring, 0, len - first);
        written += len;
    }

    /** What is kept, as UTF-8 text (a character cut at the start shows as a replacement character). */
    synchronized String text() {
        int n = (int) Math.min(written, ring.length);
        byte[] out = new byte[n];
        int start = (int) ((written - n) % ring.length);
        int first = Math.min(n, ring.length - start);
        System.arraycopy(ring, start, out, 0, first);
        System.arraycopy(ring, 0, out, first, n - first);
        return (written > n ? "..." : "") + new String(out, StandardCharsets.UTF_8);
    }
}
