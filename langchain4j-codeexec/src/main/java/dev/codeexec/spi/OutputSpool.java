package dev.codeexec.spi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The whole of one long output stream, spooled to a private temporary file on this host (mode 0600) while the
 * program runs, up to a cap; the engine then moves it into the workspace through its file system, the same way on
 * every backend. Created only when a stream outgrows the output cap, so a run with little output costs no file.
 *
 * <p>Past the cap the rest is counted, not written, and {@link #finish()} ends the file with a marker line
 * ({@link #capMarker}). A failure to write (a full disk) stops the spool and is remembered; the run goes on. Writes
 * come from the stream's reader thread (under its {@link BoundedOutput}'s lock); the other methods are called after
 * the output ended. Thread-safe.
 */
final class OutputSpool implements BoundedOutput.Overflow {

    private final String name;
    private final long cap;
    private Path file;
    private FileChannel channel;
    private long written;
    private long total;
    private String problem;

    /**
     * @param name the stream's name ({@code stdout}, {@code stderr}), in the temporary file's name
     * @param cap  bytes of the stream saved at most
     */
    OutputSpool(String name, long cap) {
        this.name = name;
        this.cap = cap;
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        total += len;
        int n = (int) Math.min(len, Math.max(0, cap - written));
        if (problem != null || n == 0) {
            return;
        }
        try {
            if (channel == null) {
                file = Files.createTempFile("codeexec-" + name + "-", ".out");
                channel = FileChannel.open(file, StandardOpenOption.WRITE);
            }
            ByteBuffer buf = ByteBuffer.wrap(b, off, n);
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            written += n;
        } catch (IOException e) {
            problem = "the engine could not write it (" + e.getClass().getSimpleName() + ")";
            closeChannel();
        }
    }

    /** Ends the file: adds the marker line when bytes past the cap were not saved, and closes it. */
    synchronized void finish() {
        if (channel != null && total > written && problem == null) {
            try {
                channel.write(ByteBuffer.wrap(capMarker(cap, total).getBytes(StandardCharsets.US_ASCII)));
            } catch (IOException e) {
                problem = "the engine could not write it (" + e.getClass().getSimpleName() + ")";
            }
        }
        closeChannel();
    }

    /** The temporary file, or null when nothing was spooled. */
    synchronized Path file() {
        return file;
    }

    /** Bytes of the stream in the file. */
    synchronized long written() {
        return written;
    }

    /** Bytes of the stream offered, saved or not. */
    synchronized long total() {
        return total;
    }

    /** Why the file is incomplete: the cap, or a failure; null when it has the whole stream. */
    synchronized String problem() {
        if (problem != null) {
            return problem;
        }
        return total > written ? "saving stopped at the engine's cap of " + cap + " bytes" : null;
    }

    /** Deletes the temporary file. */
    synchronized void delete() {
        closeChannel();
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // A temporary file left behind; nothing the run can do about it.
            }
        }
    }

    private void closeChannel() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // Closing after a failed write; the problem is already recorded.
            }
            channel = null;
        }
    }

    /**
     * The line that ends a saved stream that was longer than the cap:
     * {@code [codeexec: saving stopped at the cap of N bytes; the program wrote M bytes in all]}.
     */
    static String capMarker(long cap, long total) {
        return "\n[codeexec: saving stopped at the cap of " + cap + " bytes; the program wrote " + total
                + " bytes in all]\n";
    }
}
