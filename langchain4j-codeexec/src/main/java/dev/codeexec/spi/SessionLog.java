package dev.codeexec.spi;

import dev.codeexec.engine.ProgramPoll;
import java.nio.charset.StandardCharsets;

/**
 * The output of an interactive session: the most recent {@code capacity} bytes of both streams, addressed by
 * absolute offsets since the session started. Older bytes are dropped and reported by {@link #read}. Thread-safe.
 */
final class SessionLog {

    private final byte[] ring;
    private long written;

    SessionLog(int capacity) {
        this.ring = new byte[capacity];
    }

    synchronized void write(byte[] b, int off, int len) {
        for (int i = 0; i < len; i++) {
            ring[(int) ((written + i) % ring.length)] = b[off + i];
        }
        written += len;
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
                out = java.util.Arrays.copyOf(out, whole);
                len = whole;
            }
        }
        long dropped = Math.max(0, from - requested);
        return new ProgramPoll(new String(out, StandardCharsets.UTF_8), from, from + len, dropped, running, exitCode,
                timedOut);
    }
}
