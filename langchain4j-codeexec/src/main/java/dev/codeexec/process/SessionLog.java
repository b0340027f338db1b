package dev.codeexec.process;

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

    synchronized long size() {
        return written;
    }

    /** A window from {@code offset}, at most {@code maxBytes}; the poll's status fields are filled by the caller. */
    synchronized ProgramPoll read(long offset, int maxBytes, boolean running, Integer exitCode, boolean timedOut) {
        long oldest = Math.max(0, written - ring.length);
        long from = Math.max(Math.max(0, offset), oldest);
        from = Math.min(from, written);
        int len = (int) Math.min(Math.max(0, maxBytes), written - from);
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            out[i] = ring[(int) ((from + i) % ring.length)];
        }
        long dropped = Math.max(0, from - Math.max(0, offset));
        return new ProgramPoll(new String(out, StandardCharsets.UTF_8), from, from + len, dropped, running, exitCode,
                timedOut);
    }
}
