package dev.codeexec.process;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.OutputListener;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Launches host processes for the host-directory backends (local, sandbox): feeds stdin, pumps both output streams
 * through {@link BoundedOutput}, streams chunks to a listener, and on timeout kills the tree with
 * {@link ProcessTreeKiller}.
 *
 * <p>Thread roles: the caller's thread waits; two pump threads per run read stdout and stderr (they call the
 * listener and never call back into the engine); one thread writes stdin. Pump threads are daemons from a shared
 * pool, named {@code codeexec-io-N}.
 */
public final class HostProcesses {

    private static final Logger LOG = LoggerFactory.getLogger(HostProcesses.class);

    /**
     * How long the pumps may drain after the program exited before the tree is killed: in a PID namespace the pipes
     * close at once; without one, a leftover background process may hold them open.
     */
    private static final Duration DRAIN_GRACE = Duration.ofMillis(500);

    /** How long the pumps may take after a kill; past it the result is returned without waiting further. */
    private static final Duration KILL_DRAIN = Duration.ofSeconds(2);

    static final ExecutorService IO = Executors.newCachedThreadPool(daemonThreads("codeexec-io-"));

    private HostProcesses() {
    }

    /**
     * Runs a process to completion or timeout.
     *
     * @throws BackendUnavailableException when the process cannot be started (the wrapper or program is missing)
     */
    public static RunResult run(HostLaunch launch) {
        long startNanos = System.nanoTime();
        Process p = start(launch);
        BoundedOutput out = new BoundedOutput(launch.maxOutputBytes());
        BoundedOutput err = new BoundedOutput(launch.maxOutputBytes());
        SafeListener listener = new SafeListener(launch.listener());
        CompletableFuture<Void> pumps = CompletableFuture.allOf(
                pump(p.getInputStream(), StdStream.STDOUT, out::write, listener),
                pump(p.getErrorStream(), StdStream.STDERR, err::write, listener));
        feedStdin(p, launch.stdin());
        boolean timedOut;
        try {
            timedOut = !p.waitFor(launch.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            ProcessTreeKiller.kill(p);
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for the program; it was killed", e);
        }
        if (timedOut) {
            ProcessTreeKiller.kill(p);
            await(pumps, KILL_DRAIN);
        } else if (!await(pumps, DRAIN_GRACE)) {
            ProcessTreeKiller.kill(p);
            await(pumps, KILL_DRAIN);
        }
        int exitCode = timedOut ? -1 : p.exitValue();
        Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
        return new RunResult(out.text(), err.text(), exitCode, took, timedOut, out.truncated(), err.truncated());
    }

    /**
     * Starts an interactive session. The launch's timeout bounds the session's life.
     *
     * @param id the session id
     */
    public static ProgramSession start(HostLaunch launch, String id) {
        Process p = start(launch);
        return new HostProgramSession(id, p, launch);
    }

    static Process start(HostLaunch launch) {
        ProcessBuilder pb = new ProcessBuilder(launch.argv()).directory(launch.directory().toFile());
        pb.environment().clear();
        pb.environment().putAll(launch.environment());
        try {
            return pb.start();
        } catch (IOException e) {
            // The JDK's message names the working directory, a host path that must not reach a model.
            String reason = String.valueOf(e.getMessage()).replaceAll(" \\(in directory \"[^\"]*\"\\)", "");
            throw new BackendUnavailableException("cannot start '" + launch.argv().get(0) + "': " + reason, e);
        }
    }

    static CompletableFuture<Void> pump(InputStream in, StdStream stream, Sink sink, SafeListener listener) {
        return CompletableFuture.runAsync(() -> {
            byte[] buf = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    sink.write(buf, 0, n);
                    listener.onOutput(stream, buf, n);
                }
            } catch (IOException e) {
                // The stream was closed after a kill: what was read is kept.
            }
        }, IO);
    }

    static void feedStdin(Process p, String stdin) {
        OutputStream os = p.getOutputStream();
        if (stdin == null || stdin.isEmpty()) {
            closeQuietly(os);
            return;
        }
        byte[] bytes = stdin.getBytes(StandardCharsets.UTF_8);
        // A separate thread: a program that does not read stdin must not block the caller.
        IO.execute(() -> {
            try (os) {
                os.write(bytes);
            } catch (IOException e) {
                // The program exited or closed stdin without reading it all.
            }
        });
    }

    /** Waits for the pumps up to {@code max}; true when they finished. */
    static boolean await(CompletableFuture<?> pumps, Duration max) {
        try {
            pumps.get(max.toNanos(), TimeUnit.NANOSECONDS);
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

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Nothing to do: the process is gone or the stream already closed.
        }
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Where a pump writes what it read. */
    @FunctionalInterface
    interface Sink {
        void write(byte[] b, int off, int len);
    }

    /** Shields a run from a listener that throws: logged once, then ignored for the rest of the run. */
    static final class SafeListener {
        private final OutputListener delegate;
        private volatile boolean broken;

        SafeListener(OutputListener delegate) {
            this.delegate = delegate;
        }

        void onOutput(StdStream stream, byte[] buf, int n) {
            if (delegate == null || broken) {
                return;
            }
            try {
                delegate.onOutput(stream, java.util.Arrays.copyOf(buf, n));
            } catch (RuntimeException | Error e) {
                // An Error too (an assertion in a test's listener, say): were it to end the pump, the program would
                // block on a full pipe until its timeout.
                broken = true;
                LOG.warn("output listener threw; it is ignored for the rest of this run", e);
            }
        }
    }

}
