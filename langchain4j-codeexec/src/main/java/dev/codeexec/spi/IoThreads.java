package dev.codeexec.spi;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The shared I/O threads of runs and sessions, and the bounded waits on them: part of the backend SPI, because
 * {@link ProgramRuns} and {@link ChannelSession} wait on them and a backend's {@link ProcessChannel} may pump on them
 * (the host channel does).
 *
 * <p>Thread roles: I/O threads pump a host program's output into its sink and write stdin; they call the sink and
 * the listener, never back into an engine. All are daemons named {@code codeexec-io-N}.
 */
public final class IoThreads {

    /** Pumps and stdin writers: a cached pool, since a blocked write or pump must not hold up another run. */
    public static final ExecutorService IO = Executors.newCachedThreadPool(daemonThreads("codeexec-io-"));

    private IoThreads() {
    }

    /** A factory of daemon threads named {@code prefix + n}. */
    public static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Waits for {@code f} up to {@code max}; true when it completed (either way). An interrupt is kept and ends it. */
    public static boolean await(CompletableFuture<?> f, Duration max) {
        try {
            f.get(Math.max(0, max.toNanos()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return true;
        }
    }

    /** Closes quietly: the program may be gone or the stream closed already. */
    public static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Nothing to do: the process is gone or the stream already closed.
        }
    }
}
