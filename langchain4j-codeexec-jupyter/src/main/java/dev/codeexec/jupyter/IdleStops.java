package dev.codeexec.jupyter;

import dev.codeexec.engine.InvalidSpecException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The idle timeout of an engine's kernels: how long a workspace's kernel may stay idle before it is stopped, and the
 * one timer thread that stops it ({@code <name>}, a daemon), shared by all the engine's kernels: no thread per
 * kernel. Each {@link KernelSlot} schedules its own check after each cell; the check runs on this thread.
 *
 * <p>Thread-safe (the executor is).
 */
final class IdleStops implements AutoCloseable {

    private final Duration timeout;
    private final ScheduledThreadPoolExecutor timer;

    /**
     * @param threadName the timer thread's name
     * @param timeout    how long a kernel may stay idle; positive
     * @throws InvalidSpecException for a timeout that is not positive
     */
    IdleStops(String threadName, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new InvalidSpecException("idleTimeout (" + timeout + ") must be positive");
        }
        this.timeout = timeout;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** The idle timeout. */
    Duration timeout() {
        return timeout;
    }

    /** Runs {@code check} on the timer thread after {@code delayNanos}; null once closed. */
    ScheduledFuture<?> schedule(Runnable check, long delayNanos) {
        try {
            return timer.schedule(check, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null;
        }
    }

    /** {@code "30 min"}, {@code "5 s"}, {@code "200 ms"}: a timeout as a result's note gives it. */
    static String describe(Duration d) {
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms >= 60_000) {
            return ms / 60_000 + " min";
        }
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    /** Stops the timer: scheduled checks do not run. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
