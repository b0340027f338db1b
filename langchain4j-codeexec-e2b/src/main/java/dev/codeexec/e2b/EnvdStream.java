package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The answer of one server-streaming Connect call, read envelope by envelope. {@link #next()} gives each message;
 * the end-of-stream envelope ends it: with success, or with the error it carries, which is thrown. After the end the
 * body is read to its end, so that the connection goes back to the pool for the next request.
 *
 * <p>A stream that stays silent longer than its idle limit (envd sends a keepalive message at the interval the
 * request asked for, so silence means a broken network path or a frozen sandbox) is closed by a watchdog, and the
 * reader gets an {@link IOException}: the JDK's HTTP client has no read timeout of its own.
 *
 * <p>{@link #close()} may be called from another thread at any time; a reader blocked in {@link #next()} then gets an
 * {@link IOException}. Closing before the end closes the connection: envd then stops sending, but a program it started
 * keeps running (callers kill it first).
 */
final class EnvdStream implements AutoCloseable {

    private static final Set<EnvdStream> WATCHED = ConcurrentHashMap.newKeySet();
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "codeexec-e2b-stream-watchdog");
        t.setDaemon(true);
        return t;
    });

    static {
        WATCHDOG.scheduleWithFixedDelay(EnvdStream::watch, 1, 1, TimeUnit.SECONDS);
    }

    private final InputStream body;
    private final String sandboxId;
    private final String what;
    private final long idleLimitNanos;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile long lastActivity = System.nanoTime();
    private volatile boolean stalled;
    private boolean ended;

    /**
     * @param idleLimit how long the stream may stay silent before the watchdog closes it
     */
    EnvdStream(InputStream body, String sandboxId, String what, Duration idleLimit) {
        this.body = body;
        this.sandboxId = sandboxId;
        this.what = what;
        this.idleLimitNanos = idleLimit.toNanos();
        WATCHED.add(this);
    }

    private static void watch() {
        long now = System.nanoTime();
        for (EnvdStream s : WATCHED) {
            if (now - s.lastActivity > s.idleLimitNanos) {
                s.stalled = true;
                s.close();
            }
        }
    }

    /**
     * The next message, or null after a successful end of stream.
     *
     * @throws E2bApiException      for an end of stream that carries an error (its Connect code is the exception's
     *                              {@link E2bApiException#errorCode()})
     * @throws E2bProtocolException for a broken envelope, a stream that ends without its end-of-stream envelope, or a
     *                              message that is not JSON
     * @throws IOException          when reading failed (the connection broke, the stream was closed, or it stalled:
     *                              see {@link #stalled()})
     */
    JsonNode next() throws IOException {
        if (ended) {
            return null;
        }
        ConnectFrames.Frame f = ConnectFrames.read(body);
        lastActivity = System.nanoTime();
        if (f == null) {
            throw new E2bProtocolException("the stream of '" + what + "' ended without its end-of-stream envelope",
                    200, "truncated");
        }
        if (f.endStream()) {
            ended = true;
            ConnectFrames.EndStream end = ConnectFrames.endStream(f.payload());
            drain();
            if (!end.ok()) {
                throw E2bErrors.connect(end.errorCode(), what, sandboxId, 200, 1);
            }
            return null;
        }
        return Json.parse(f.payload(), what);
    }

    /** True once the end-of-stream envelope was read. */
    boolean ended() {
        return ended;
    }

    /** True when the watchdog closed the stream because it stayed silent past its idle limit. */
    boolean stalled() {
        return stalled;
    }

    /** Reads what follows the end-of-stream envelope (nothing, normally) so that the connection can be reused. */
    private void drain() {
        try {
            body.readNBytes(64);
        } catch (IOException ignored) {
            // Nothing to reuse.
        }
        close();
    }

    @Override
    public void close() {
        WATCHED.remove(this);
        if (closed.compareAndSet(false, true)) {
            try {
                body.close();
            } catch (IOException ignored) {
                // Closing a broken stream.
            }
        }
    }
}
