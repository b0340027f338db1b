package dev.codeexec.samples.analyst;

import java.io.PrintStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Shows that a long step is still working: after two seconds, a line with the elapsed time every five seconds
 * (plain lines rather than a spinner, so that logs and pipes read well). Quick steps print nothing.
 */
final class Progress implements AutoCloseable {

    private static final ScheduledExecutorService TICKER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sample-progress");
        t.setDaemon(true); // only prints; losing it at exit loses nothing
        return t;
    });

    private final ScheduledFuture<?> ticks;

    private Progress(PrintStream out, String what) {
        long start = System.nanoTime();
        this.ticks = TICKER.scheduleAtFixedRate(() -> out.printf("      ... %s: %d s%n", what,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)), 2, 5, TimeUnit.SECONDS);
    }

    /** Starts showing progress for {@code what} ("starting a Jupyter kernel"); close it when the step is done. */
    static Progress of(PrintStream out, String what) {
        return new Progress(out, what);
    }

    @Override
    public void close() {
        ticks.cancel(false);
    }
}
