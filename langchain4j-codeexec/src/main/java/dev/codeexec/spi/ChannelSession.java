package dev.codeexec.spi;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
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
 * An interactive program on any {@link ProcessChannel}: output of both streams kept in a {@link SessionLog}, stdin
 * open until closed, a life-time limit. Internal: engines hand it out as a {@link ProgramSession}.
 *
 * <p>Standard input is written by an I/O thread, in chunks, one write at a time; {@link #write} waits for its write at
 * most {@link #WRITE_WAIT} and then fails, so a program that does not read its input holds up neither the caller nor,
 * through the caller, anyone else. Lock rules: {@code stdinLock} guards the stream reference and the write in flight
 * and is never held during I/O that can block; {@link #kill} and {@link #close} take no lock a writer holds. A chunk
 * already handed to the pipe cannot be taken back: the I/O thread stays in it until the program reads or dies (the
 * session's life-time limit ends it at the latest).
 */
final class ChannelSession implements ProgramSession {

    /** {@value} bytes of recent output kept per session (1 MiB); the buffer grows to it only as output comes. */
    static final int LOG_CAPACITY = 1 << 20;

    /** How long {@link #write} waits for the program to take its input: 5 seconds. */
    static final Duration WRITE_WAIT = Duration.ofSeconds(5);

    /** Bytes per write to the pipe; between chunks a write that was given up stops. */
    private static final int CHUNK = 8192;

    private static final ScheduledExecutorService TIMER =
            Executors.newSingleThreadScheduledExecutor(IoThreads.daemonThreads("codeexec-session-timer-"));

    private final String id;
    private final SessionLog log = new SessionLog(LOG_CAPACITY);
    private final ChannelProcess process;
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

    /** Starts the program on {@code channel} and returns its session. */
    public static ChannelSession start(String id, ProcessChannel channel, ProgramLaunch launch) {
        return new ChannelSession(id, channel, launch, WRITE_WAIT);
    }

    /** @param writeWait how long {@link #write} waits for the program to take its input */
    ChannelSession(String id, ProcessChannel channel, ProgramLaunch launch, Duration writeWait) {
        this.id = id;
        this.writeWait = writeWait;
        SafeListener listener = new SafeListener(launch.listener());
        this.process = channel.start(launch, (stream, b, off, len) -> {
            log.write(b, off, len);
            listener.onOutput(stream, b, off, len);
        });
        this.stdin = process.stdin();
        this.deadline = TIMER.schedule(() -> {
            timedOut = true;
            process.killTree();
        }, launch.timeout().toMillis(), TimeUnit.MILLISECONDS);
        process.exit().whenComplete((code, e) -> deadline.cancel(false));
        // No more output comes: the log gives back what it does not need, also while the session stays open.
        process.outputEnd().whenComplete((v, e) -> log.trimToSize());
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

    /** Bytes the output log's buffer takes now (for tests of its memory). */
    int logBufferBytes() {
        return log.bufferBytes();
    }

    @Override
    public ProgramPoll poll(long offset, int maxBytes) {
        boolean running = alive();
        if (!running) {
            // Output written just before exit may still be on its way: give it a moment.
            IoThreads.await(process.outputEnd(), Duration.ofMillis(200));
        }
        return log.read(offset, maxBytes, running, exitCode().orElse(null), timedOut);
    }

    @Override
    public ProgramPoll await(Duration wait, long offset, int maxBytes) {
        IoThreads.await(process.exit(), wait);
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
        if (!alive()) {
            throw new InvalidSpecException("the program has exited; cannot write to it");
        }
    }

    /** Starts feeding {@code bytes} from an I/O thread; the caller holds {@code stdinLock} and found none pending. */
    private PendingWrite startWrite(byte[] bytes) {
        PendingWrite w = new PendingWrite(bytes.length);
        OutputStream out = stdin;
        pending = w;
        IoThreads.IO.execute(() -> feed(w, bytes, out));
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
                    IoThreads.closeQuietly(stdin);
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
                IoThreads.closeQuietly(stdin);
                stdin = null;
            }
        }
    }

    /**
     * Sends SIGTERM to the program (not to a launcher around it), waits up to {@code grace} for it to exit, then kills
     * the tree; returns once it is gone, with the output it printed while shutting down.
     */
    @Override
    public void kill(Duration grace) {
        if (alive()) {
            process.signal(ProgramSignal.TERMINATE);
            IoThreads.await(process.exit(), grace);
            process.killTree();
        }
        awaitExit();
    }

    /** After a kill the program is gone once reaped: wait for that and its last output (bounded). */
    private void awaitExit() {
        IoThreads.await(process.exit(), ProgramRuns.KILL_DRAIN);
        IoThreads.await(process.outputEnd(), ProgramRuns.KILL_DRAIN);
    }

    private boolean alive() {
        return !process.exit().isDone();
    }

    @Override
    public Optional<Integer> exitCode() {
        if (alive()) {
            return Optional.empty();
        }
        return Optional.of(timedOut ? -1 : process.exit().join());
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            deadline.cancel(false);
            // Kill first: a write blocked on a full pipe ends (broken pipe) once the reader is gone.
            if (alive()) {
                process.killTree();
            }
            awaitExit();
            closeStdin();
        }
    }
}
