package dev.codeexec.process;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.StdStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** An interactive host process: output kept in a {@link SessionLog}, stdin open until closed, a life-time limit. */
final class HostProgramSession implements ProgramSession {

    /** {@value} bytes of recent output kept per session (1 MiB). */
    static final int LOG_CAPACITY = 1 << 20;

    private static final ScheduledExecutorService TIMER =
            Executors.newSingleThreadScheduledExecutor(HostProcesses.daemonThreads("codeexec-session-timer-"));

    private final String id;
    private final Process process;
    private final boolean wrapped;
    private final SessionLog log = new SessionLog(LOG_CAPACITY);
    private final CompletableFuture<Void> pumps;
    private final ScheduledFuture<?> deadline;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean timedOut;
    private final Object stdinLock = new Object();
    private OutputStream stdin;
    private final CompletableFuture<Void> initialStdin;

    HostProgramSession(String id, Process process, HostLaunch launch) {
        this.id = id;
        this.process = process;
        this.wrapped = launch.wrapped();
        HostProcesses.SafeListener listener = new HostProcesses.SafeListener(launch.listener());
        this.pumps = CompletableFuture.allOf(
                HostProcesses.pump(process.getInputStream(), StdStream.STDOUT, log::write, listener),
                HostProcesses.pump(process.getErrorStream(), StdStream.STDERR, log::write, listener));
        this.stdin = process.getOutputStream();
        this.deadline = TIMER.schedule(() -> {
            timedOut = true;
            ProcessTreeKiller.kill(process);
        }, launch.timeout().toMillis(), TimeUnit.MILLISECONDS);
        process.onExit().thenRun(() -> deadline.cancel(false));
        if (launch.stdin() != null && !launch.stdin().isEmpty()) {
            // Fed from an I/O thread: a program that does not read it must not block the start. Later writes wait
            // for it, so the order is kept.
            byte[] initial = launch.stdin().getBytes(StandardCharsets.UTF_8);
            this.initialStdin = CompletableFuture.runAsync(() -> {
                try {
                    writeBytes(initial);
                } catch (InvalidSpecException exitedOrClosed) {
                    // The program ended or closed stdin before reading it all.
                }
            }, HostProcesses.IO);
        } else {
            this.initialStdin = CompletableFuture.completedFuture(null);
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public ProgramPoll poll(long offset, int maxBytes) {
        boolean running = process.isAlive();
        if (!running) {
            // Output written just before exit is still in the pipes: give the pumps a moment.
            HostProcesses.await(pumps, Duration.ofMillis(200));
        }
        return log.read(offset, maxBytes, running, exitCode().orElse(null), timedOut);
    }

    @Override
    public ProgramPoll await(Duration wait, long offset, int maxBytes) {
        try {
            process.waitFor(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return poll(offset, maxBytes);
    }

    @Override
    public void write(String data, boolean newline) {
        initialStdin.join();
        writeBytes((newline ? data + "\n" : data).getBytes(StandardCharsets.UTF_8));
    }

    private void writeBytes(byte[] bytes) {
        synchronized (stdinLock) {
            if (stdin == null || !process.isAlive()) {
                throw new InvalidSpecException("session " + id + " has " + (process.isAlive()
                        ? "its stdin closed" : "exited") + "; cannot write to it");
            }
            try {
                stdin.write(bytes);
                stdin.flush();
            } catch (IOException e) {
                throw new InvalidSpecException("session " + id + " no longer reads its stdin");
            }
        }
    }

    @Override
    public void closeStdin() {
        synchronized (stdinLock) {
            if (stdin != null) {
                HostProcesses.closeQuietly(stdin);
                stdin = null;
            }
        }
    }

    @Override
    public void kill(Duration grace) {
        if (process.isAlive()) {
            ProcessTreeKiller.terminate(process, grace, wrapped);
        }
        awaitExit();
        HostProcesses.await(pumps, Duration.ofSeconds(2));
    }

    /** After a SIGKILL the process is gone once reaped: wait for that (bounded), so callers see it ended. */
    private void awaitExit() {
        try {
            process.waitFor(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public Optional<Integer> exitCode() {
        if (process.isAlive()) {
            return Optional.empty();
        }
        return Optional.of(timedOut ? -1 : process.exitValue());
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            deadline.cancel(false);
            // Kill first: a write blocked on a full pipe holds the stdin lock until the reader is gone.
            if (process.isAlive()) {
                ProcessTreeKiller.kill(process);
                awaitExit();
            }
            closeStdin();
            HostProcesses.await(pumps, Duration.ofSeconds(2));
        }
    }
}
