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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An interactive host process: output kept in a {@link SessionLog}, stdin open until closed, a life-time limit.
 *
 * <p>Standard input is written by an I/O thread, in chunks, one write at a time; {@link #write} waits for its write at
 * most {@link #WRITE_WAIT} and then fails, so a program that does not read its input holds up neither the caller nor,
 * through the caller, anyone else. Lock rules: {@code stdinLock} guards the stream reference and the write in flight
 * and is never held during I/O that can block; {@link #kill} and {@link #close} take no lock a writer holds. A chunk
 * already handed to the pipe cannot be taken back: the I/O thread stays in it until the program reads or dies (the
 * session's life-time limit ends it at the latest).
 */
final class HostProgramSession implements ProgramSession {

    /** {@value} bytes of recent output kept per session (1 MiB). */
    static final int LOG_CAPACITY = 1 << 20;

    /** How long {@link #write} waits for the program to take its input: 5 seconds. */
    static final Duration WRITE_WAIT = Duration.ofSeconds(5);

    /** Bytes per write to the pipe; between chunks a write that was given up stops. */
    private static final int CHUNK = 8192;

    private static final ScheduledExecutorService TIMER =
            Executors.newSingleThreadScheduledExecutor(HostProcesses.daemonThreads("codeexec-session-timer-"));

    private final String id;
    private final Process process;
    private final boolean wrapped;
    private final SessionLog log = new SessionLog(LOG_CAPACITY);
    private final CompletableFuture<Void> pumps;
    private final ScheduledFuture<?> deadline;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Duration writeWait;
    private volatile boolean timedOut;
    private final Object stdinLock = new Object();
    /** The program's stdin; null once closed. Guarded by {@code stdinLock}. */
    private OutputStream stdin;
    /** True once the caller asked for end of file; no write is accepted after it. Guarded by {@code stdinLock}. */
    private boolean closeRequested;
    /** The write in flight, or null. Guarded by {@code stdinLock}. */
    private PendingWrite pending;

    /** One write, fed to the pipe chunk by chunk by an I/O thread. */
    private static final class PendingWrite {
        final int total;
        final AtomicLong written = new AtomicLong();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** Set when the caller stopped waiting: the chunks not yet started are dropped. */
        volatile boolean abandoned;

        PendingWrite(int total) {
            this.total = total;
        }
    }

    HostProgramSession(String id, Process process, HostLaunch launch) {
        this(id, process, launch, WRITE_WAIT);
    }

    /** @param writeWait how long {@link #write} waits for the program to take its input */
    HostProgramSession(String id, Process process, HostLaunch launch, Duration writeWait) {
        this.id = id;
        this.process = process;
        this.writeWait = writeWait;
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
            // Fed like any write, without waiting: a program that does not read it must not block the start. A later
            // write waits for it, so the order is kept.
            synchronized (stdinLock) {
                startWrite(launch.stdin().getBytes(StandardCharsets.UTF_8));
            }
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

    /**
     * Writes to the program's stdin, waiting at most the write wait (5 seconds) for the program to take it, counted
     * from the call, including any wait for an earlier write still in flight.
     *
     * @throws InvalidSpecException when the program has exited, its stdin was closed, or it did not take the input in
     *                              time ("the program is not reading its standard input"); the message names no
     *                              session id, so callers can name theirs
     */
    @Override
    public void write(String data, boolean newline) {
        byte[] bytes = (newline ? data + "\n" : data).getBytes(StandardCharsets.UTF_8);
        long deadlineNanos = System.nanoTime() + writeWait.toNanos();
        PendingWrite mine;
        while (true) {
            PendingWrite earlier;
            synchronized (stdinLock) {
                requireWritable();
                earlier = pending;
                if (earlier == null) {
                    mine = startWrite(bytes);
                    break;
                }
            }
            if (!awaitUntil(earlier.done, deadlineNanos)) {
                throw new InvalidSpecException("the program is not reading its standard input: earlier input is"
                        + " still waiting to be read, so nothing was written. Close its input or kill it");
            }
        }
        if (!awaitUntil(mine.done, deadlineNanos)) {
            mine.abandoned = true;
            throw new InvalidSpecException("the program is not reading its standard input: it took "
                    + mine.written.get() + " of " + mine.total + " bytes within " + writeWait.toMillis() + " ms; the"
                    + " rest was dropped, except the part being written (at most " + CHUNK + " bytes), which it gets"
                    + " if it reads. Close its input or kill it");
        }
        if (mine.done.isCompletedExceptionally()) {
            // Broken pipe: the program closed its stdin or ended (a kill races with this write); no need to tell which.
            throw new InvalidSpecException("the program stopped reading its standard input (it closed it or ended)"
                    + " after " + mine.written.get() + " of " + mine.total + " bytes; cannot write to it");
        }
    }

    /** Throws when no more input is accepted; the caller holds {@code stdinLock}. */
    private void requireWritable() {
        if (stdin == null || closeRequested) {
            throw new InvalidSpecException("the program's standard input was closed; cannot write to it");
        }
        if (!process.isAlive()) {
            throw new InvalidSpecException("the program has exited; cannot write to it");
        }
    }

    /** Starts feeding {@code bytes} from an I/O thread; the caller holds {@code stdinLock} and found none pending. */
    private PendingWrite startWrite(byte[] bytes) {
        PendingWrite w = new PendingWrite(bytes.length);
        OutputStream out = stdin;
        pending = w;
        HostProcesses.IO.execute(() -> feed(w, bytes, out));
        return w;
    }

    /** Runs on an I/O thread: writes chunk by chunk until done, abandoned or failed, then lets the next write go. */
    private void feed(PendingWrite w, byte[] bytes, OutputStream out) {
        IOException failure = null;
        try {
            for (int off = 0; off < bytes.length && !w.abandoned; off += CHUNK) {
                int n = Math.min(CHUNK, bytes.length - off);
                out.write(bytes, off, n);
                out.flush();
                w.written.addAndGet(n);
            }
        } catch (IOException e) {
            failure = e; // the program exited or closed its stdin
        } finally {
            synchronized (stdinLock) {
                if (pending == w) {
                    pending = null;
                }
                // A close asked for while this write was in flight happens now: closing earlier would have waited
                // for this thread's lock on the stream. Flushed after every chunk, so closing does not block.
                if (closeRequested && stdin != null) {
                    HostProcesses.closeQuietly(stdin);
                    stdin = null;
                }
            }
            if (failure == null) {
                w.done.complete(null);
            } else {
                w.done.completeExceptionally(failure);
            }
        }
    }

    /** Waits for {@code f} until the deadline; true when it is done (either way). */
    private static boolean awaitUntil(CompletableFuture<?> f, long deadlineNanos) {
        try {
            f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Closes stdin (end of file) once the write in flight, if any, is over; returns at once either way. No write is
     * accepted after it.
     */
    @Override
    public void closeStdin() {
        synchronized (stdinLock) {
            closeRequested = true;
            if (pending == null && stdin != null) {
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
            // Kill first: a write blocked on a full pipe ends (broken pipe) once the reader is gone.
            if (process.isAlive()) {
                ProcessTreeKiller.kill(process);
                awaitExit();
            }
            closeStdin();
            HostProcesses.await(pumps, Duration.ofSeconds(2));
        }
    }
}
