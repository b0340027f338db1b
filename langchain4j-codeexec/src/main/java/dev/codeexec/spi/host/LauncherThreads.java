package dev.codeexec.spi.host;

import dev.codeexec.engine.CodeExecException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that fork host processes whose life is tied to their parent: each thread lives as long as the processes
 * it forked, and no longer than that plus an idle keep-alive. Host-family SPI (see the package).
 *
 * <p><b>Why a pool of its own.</b> A parent-death signal ({@code PR_SET_PDEATHSIG}: {@code setpriv --pdeathsig},
 * bubblewrap's {@code --die-with-parent}, {@code unshare --kill-child}) fires when the <em>thread</em> that forked the
 * process ends, not when its JVM does. Forked from a caller's thread (a request thread, a tool-call thread of a pool
 * that shrinks, a virtual thread's carrier), a session would die with that thread. Forked from a thread of a plain
 * cached pool, it would die when the pool lets the idle thread go. So a launcher thread only forks, counts the
 * processes it forked that still run, and ends only when that count is zero and it has been idle for the keep-alive:
 * after a burst of 128 concurrent starts the pool shrinks back to the threads that still have a live process, and a
 * long session keeps its thread (and so its life) whatever other threads expire.
 *
 * <p>Hand-off is direct (a {@link SynchronousQueue}): a start goes to an idle thread or to a new one, never waits
 * behind another start. Threads are daemons named {@code <prefix>N}. {@link #shutdown()} refuses new starts; threads
 * whose processes still run stay until those end.
 */
public final class LauncherThreads {

    /** How long a launcher thread without live processes waits for more work before it ends. */
    public static final Duration DEFAULT_KEEP_ALIVE = Duration.ofSeconds(60);

    private static final LauncherThreads SHARED = new LauncherThreads("codeexec-launcher-", DEFAULT_KEEP_ALIVE);

    private final String prefix;
    private final long keepAliveNanos;
    private final SynchronousQueue<FutureTask<Process>> handOff = new SynchronousQueue<>();
    private final Set<Worker> workers = ConcurrentHashMap.newKeySet();
    private final AtomicInteger numbers = new AtomicInteger();
    private volatile boolean shutdown;

    /**
     * @param prefix    the name prefix of the threads, for example {@code codeexec-local-launcher-}
     * @param keepAlive how long a thread without live processes waits for work before it ends
     */
    public LauncherThreads(String prefix, Duration keepAlive) {
        if (keepAlive == null || keepAlive.isNegative() || keepAlive.isZero()) {
            throw new IllegalArgumentException("keepAlive (" + keepAlive + ") must be positive");
        }
        this.prefix = prefix;
        this.keepAliveNanos = keepAlive.toNanos();
    }

    /** The JVM-wide launcher threads, for host runs of engines without threads of their own. Never shut down. */
    public static LauncherThreads shared() {
        return SHARED;
    }

    /**
     * Runs {@code fork} on a launcher thread and returns the process it started; that thread stays alive until the
     * process has exited. An interrupt of the caller does not abandon a fork in flight (its process would be left
     * unowned): the call waits for it and keeps the interrupt flag.
     *
     * @throws CodeExecException when the threads were shut down (the engine is closed)
     * @throws RuntimeException  what {@code fork} threw
     */
    public Process fork(Callable<Process> fork) {
        if (shutdown) {
            throw new CodeExecException("this engine is closed");
        }
        FutureTask<Process> task = new FutureTask<>(fork);
        if (!handOff.offer(task)) {
            Worker w = new Worker(task);
            workers.add(w);
            w.thread.start();
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new CodeExecException("could not start the process: " + e.getCause(), e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The number of launcher threads alive now (for tests, benchmarks and diagnostics). */
    public int threadCount() {
        return workers.size();
    }

    /**
     * Refuses new starts; idle threads end now, threads whose processes still run end once those have exited (their
     * parent-death signal must not fire early). Idempotent.
     */
    public void shutdown() {
        shutdown = true;
        workers.forEach(Worker::wake);
    }

    /** One launcher thread and the count of its forked processes that still run. */
    private final class Worker implements Runnable {
        final Thread thread;
        private final AtomicInteger live = new AtomicInteger();
        private FutureTask<Process> first;
        private volatile long idleSince = System.nanoTime();

        Worker(FutureTask<Process> first) {
            this.first = first;
            this.thread = new Thread(this, prefix + numbers.incrementAndGet());
            thread.setDaemon(true);
        }

        void wake() {
            synchronized (this) {
                notifyAll();
            }
            thread.interrupt();
        }

        @Override
        public void run() {
            try {
                FutureTask<Process> task = first;
                first = null;
                while (true) {
                    if (task != null) {
                        runFork(task);
                        task = null;
                    }
                    if (shutdown) {
                        awaitProcesses();
                        return;
                    }
                    long idleFor = System.nanoTime() - idleSince;
                    long wait = live.get() > 0 ? keepAliveNanos : Math.max(0, keepAliveNanos - idleFor);
                    try {
                        task = handOff.poll(wait, TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        continue; // shutdown(): checked above
                    }
                    if (task == null && live.get() == 0 && System.nanoTime() - idleSince >= keepAliveNanos) {
                        // No hand-off can reach this thread now: it is not polling. Its processes are all gone.
                        return;
                    }
                }
            } finally {
                workers.remove(this);
            }
        }

        private void runFork(FutureTask<Process> task) {
            live.incrementAndGet(); // counted before the fork: the thread must not expire while one is in flight
            task.run();
            Process p = null;
            try {
                p = task.isCancelled() ? null : task.get();
            } catch (ExecutionException | InterruptedException e) {
                // The fork failed: nothing to outlive.
            }
            if (p == null) {
                processEnded();
            } else {
                p.onExit().whenComplete((x, t) -> processEnded());
            }
        }

        private void processEnded() {
            idleSince = System.nanoTime();
            if (live.decrementAndGet() == 0) {
                synchronized (this) {
                    notifyAll();
                }
            }
        }

        /** After shutdown: stay until every process this thread forked has exited. */
        private void awaitProcesses() {
                synchronized (this) {
                while (live.get() > 0) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // shutdown()'s own wake-up: keep waiting for the processes
                    }
                }
            }
        }
    }
}
