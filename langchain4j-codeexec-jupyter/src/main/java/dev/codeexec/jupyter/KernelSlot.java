package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.BoundedOutput;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The kernel of one workspace: started at the first cell, reused by the next ones (state persists), replaced when it
 * died, stopped when the workspace is removed.
 *
 * <p>Rules of a cell:
 * <ul>
 *   <li>Past its timeout it is interrupted: {@code interrupt_request} on control; if the kernel is not idle within
 *       the interrupt grace, SIGINT to the kernel; if it is still not idle after another grace, the kernel is killed
 *       and the result says that the workspace's state was lost (the next cell starts a fresh kernel).</li>
 *   <li>A kernel that dies during a cell (its process ended, or it stopped answering heartbeats) ends the cell at
 *       once with a result that says so; one that died between cells is replaced at the next cell, whose result says
 *       the state was lost.</li>
 *   <li>An interrupt of the waiting caller interrupts the cell the same way (bounded), then throws.</li>
 *   <li>With an idle timeout ({@link IdleStops}), a kernel idle that long is stopped (by the timer's thread); the
 *       next cell starts a fresh kernel and its result begins with a line that says the earlier state is gone.</li>
 * </ul>
 *
 * <p>Lock rule: {@code lock} serialises starts, cells and restarts of this workspace (the kernel runs one cell at a
 * time anyway); it is held while waiting for the kernel and taken by no other thread of this package, in particular
 * never by a socket reader; the idle check only tries it (a cell in progress schedules the next check when it ends).
 * {@link #kernel} is volatile so that a restart or removal can stop a kernel without
 * waiting for the cell in progress: that cell then ends with the kernel's death.
 */
final class KernelSlot {

    /** Displays saved per cell, and bytes of their messages: past either, displays are dropped and counted. */
    static final int MAX_DISPLAYS = 100;
    static final long MAX_DISPLAY_BYTES = 64L << 20;

    /** What a cell came to. */
    record Outcome(String text, int exitCode, boolean timedOut, boolean truncated, boolean stateLost) {
    }

    /** Starts a kernel for this workspace. */
    interface Starter {
        Kernel start();
    }

    private final String workspaceId;
    private final Starter starter;
    private final ObjectMapper json;
    private final Duration interruptGrace;
    private final IdleStops idle;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Kernel kernel;
    private volatile boolean closed;
    /** When the last cell or start ended (System.nanoTime). Guarded by {@code lock}. */
    private long lastUsed;
    /** The scheduled idle check, or null. Guarded by {@code lock}. */
    private ScheduledFuture<?> idleCheck;
    /** Set when the idle timeout stopped the kernel, until the next cell says so. Guarded by {@code lock}. */
    private boolean stoppedIdle;

    /** @param idle the engine's idle timeout, or null for none */
    KernelSlot(String workspaceId, Starter starter, ObjectMapper json, Duration interruptGrace, IdleStops idle) {
        this.workspaceId = workspaceId;
        this.starter = starter;
        this.json = json;
        this.interruptGrace = interruptGrace;
        this.idle = idle;
    }

    /** The current kernel, or null (tests and diagnostics). */
    Kernel current() {
        return kernel;
    }

    /**
     * Runs one cell.
     *
     * @param rich where the cell's rich outputs are saved
     */
    Outcome run(String code, Duration timeout, int maxOutputBytes, Supplier<Cell.RichOutputs> rich) {
        lockInterruptibly();
        try {
            requireOpen();
            String replaced = null;
            Kernel k = kernel;
            if (k != null && !k.alive()) {
                replaced = "[the kernel of this workspace had stopped since the last cell (" + k.deathReason()
                        + "); this cell ran in a fresh kernel: variables and imports of earlier cells are gone]";
                discard(k);
                k = null;
            }
            if (k == null && stoppedIdle) {
                replaced = "[the earlier kernel of this workspace was stopped after being idle for "
                        + IdleStops.describe(idle.timeout()) + "; this cell ran in a fresh kernel: variables and "
                        + "imports of earlier cells are gone]";
            }
            stoppedIdle = false;
            if (k == null) {
                k = startLocked();
            }
            Outcome o = execute(k, code, timeout, maxOutputBytes, rich.get());
            if (o.stateLost()) {
                discard(k);
            }
            if (replaced == null) {
                return o;
            }
            return new Outcome(replaced + "\n" + o.text(), o.exitCode(), o.timedOut(), o.truncated(), true);
        } finally {
            touch();
            lock.unlock();
        }
    }

    /** Stops the current kernel (gracefully, bounded) and starts a fresh one; a cell in progress ends as lost. */
    void restart() {
        Kernel old = kernel;
        if (old != null) {
            old.stop(json, "the kernel was restarted on request");
        }
        lockInterruptibly();
        try {
            requireOpen();
            Kernel k = kernel;
            if (k != null && k != old && k.alive()) {
                return; // someone started a fresh one meanwhile
            }
            if (k != null) {
                discard(k);
            }
            stoppedIdle = false;
            startLocked();
        } finally {
            touch();
            lock.unlock();
        }
    }

    /** Whether the idle timeout stopped this workspace's kernel and no cell ran since (tests). */
    boolean stoppedIdle() {
        return stoppedIdle;
    }

    /** Caller holds {@code lock}: the kernel was used now; its idle check is due after the timeout. */
    private void touch() {
        if (idle == null) {
            return;
        }
        lastUsed = System.nanoTime();
        if (idleCheck != null) {
            idleCheck.cancel(false);
            idleCheck = null;
        }
        if (kernel != null && !closed) {
            idleCheck = idle.schedule(this::checkIdle, idle.timeout().toNanos());
        }
    }

    /**
     * The timer thread: stops the kernel when it has been idle for the timeout, else checks again when it would be.
     * Skipped while a cell, start or restart holds the lock: that one schedules a new check when it ends.
     */
    private void checkIdle() {
        if (!lock.tryLock()) {
            return;
        }
        try {
            idleCheck = null;
            Kernel k = kernel;
            if (k == null || closed || !k.alive()) {
                return; // a dead kernel is reported by the next cell
            }
            long left = idle.timeout().toNanos() - (System.nanoTime() - lastUsed);
            if (left > 0) {
                idleCheck = idle.schedule(this::checkIdle, left);
                return;
            }
            kernel = null;
            k.stop(json, "the kernel was stopped after being idle for " + IdleStops.describe(idle.timeout()));
            stoppedIdle = true;
        } finally {
            lock.unlock();
        }
    }

    /** Marks the slot closed and asks its kernel to shut down; returns the request to finish with. */
    KernelRequest beginClose() {
        closed = true;
        Kernel k = kernel;
        return k == null ? null : k.beginShutdown(json);
    }

    /**
     * Finishes {@link #beginClose}: waits for the kernel to exit (bounded), kills what is left, releases it. Then waits
     * for a cell or start in progress to end (a cell ends at once: its kernel is gone; a start is bounded by the start
     * timeout) and stops a kernel that start produced, so none is left behind.
     */
    void finishClose(KernelRequest shutdown) {
        Kernel k = kernel;
        if (k != null) {
            k.finishShutdown(shutdown, "the workspace's kernel was shut down");
        }
        lock.lock();
        try {
            if (idleCheck != null) {
                idleCheck.cancel(false);
                idleCheck = null;
            }
            Kernel late = kernel;
            kernel = null;
            if (late != null) {
                late.stop(json, "the workspace's kernel was shut down");
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops the kernel and refuses further cells. Idempotent. */
    void close() {
        finishClose(beginClose());
    }

    private Kernel startLocked() {
        Kernel k = starter.start();
        if (closed) {
            k.stop(json, "the workspace was removed while its kernel started");
            throw new WorkspaceGoneException("the workspace was removed");
        }
        kernel = k;
        return k;
    }

    private void discard(Kernel k) {
        if (kernel == k) {
            kernel = null;
        }
        k.kill(k.deathReason() == null ? "the kernel was discarded" : k.deathReason());
        k.release();
    }

    private void requireOpen() {
        if (closed) {
            throw new WorkspaceGoneException("the workspace was removed");
        }
    }

    private void lockInterruptibly() {
        try {
            lock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for the workspace's kernel", e);
        }
    }

    private enum Phase { RUNNING, INTERRUPTED, SIGNALLED }

    private Outcome execute(Kernel k, String code, Duration timeout, int maxOutputBytes, Cell.RichOutputs rich) {
        Cell cell = new Cell(json, maxOutputBytes, rich);
        // The reader may queue a few times the cap of stream JSON (escapes, field names); the cell keeps the cap.
        Budget budget = new Budget(4L * maxOutputBytes + 65536, MAX_DISPLAYS, MAX_DISPLAY_BYTES);
        Phase phase = Phase.RUNNING;
        boolean timedOut = false;
        boolean callerInterrupted = false;
        KernelRequest interrupt = null;
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KernelRequest req = k.execute(code, budget, json)) {
            while (!cell.complete()) {
                JupyterMessage m;
                try {
                    m = req.poll(deadline - System.nanoTime());
                } catch (InterruptedException e) {
                    callerInterrupted = true;
                    if (phase == Phase.RUNNING) {
                        deadline = System.nanoTime(); // act as at a timeout, but say why
                    }
                    continue;
                }
                if (m == null) {
                    switch (phase) {
                        case RUNNING -> {
                            timedOut = !callerInterrupted;
                            interrupt = k.interrupt(json);
                            phase = Phase.INTERRUPTED;
                        }
                        case INTERRUPTED -> {
                            k.signalInterrupt();
                            phase = Phase.SIGNALLED;
                        }
                        case SIGNALLED -> {
                            k.kill("the kernel did not return to idle after an interrupt");
                            cell.note("[" + stopReason(timeout, timedOut, callerInterrupted) + " and was interrupted, "
                                    + "but the kernel did not return to idle, so it was stopped: the variables, imports"
                                    + " and other state of this workspace's kernel are lost; the next cell starts a "
                                    + "fresh kernel]");
                            return finish(cell, budget, -1, timedOut, true, callerInterrupted, false);
                        }
                    }
                    deadline = System.nanoTime() + interruptGrace.toNanos();
                    continue;
                }
                if (m.isDeath()) {
                    cell.note("[the kernel died while this cell ran: " + k.deathReason() + ". The variables, imports "
                            + "and other state of this workspace's kernel are lost; the next cell starts a fresh "
                            + "kernel]");
                    return finish(cell, budget, -1, timedOut, true, callerInterrupted, true);
                }
                cell.accept(m);
            }
            if (phase != Phase.RUNNING) {
                cell.note("[" + stopReason(timeout, timedOut, callerInterrupted) + " and was interrupted; the kernel "
                        + "and its state are kept]");
            }
            int exit = timedOut || callerInterrupted ? -1 : cell.status().equals("ok") ? 0 : 1;
            return finish(cell, budget, exit, timedOut, false, callerInterrupted, false);
        } finally {
            if (interrupt != null) {
                interrupt.close();
            }
        }
    }

    private static String stopReason(Duration timeout, boolean timedOut, boolean callerInterrupted) {
        if (callerInterrupted && !timedOut) {
            return "the cell was cancelled (the waiting thread was interrupted)";
        }
        long ms = timeout.toMillis();
        return "the cell ran past its time limit of " + (ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms");
    }

    private Outcome finish(Cell cell, Budget budget, int exit, boolean timedOut, boolean lost,
                           boolean callerInterrupted, boolean died) {
        cell.settle();
        boolean truncated = cell.truncated();
        if (budget.droppedStreamBytes() > 0 && !truncated) {
            cell.note(BoundedOutput.marker(budget.droppedStreamBytes()));
        }
        truncated |= budget.droppedStreamBytes() > 0;
        if (budget.droppedRich() > 0) {
            cell.note("[" + budget.droppedRich() + " more displays were not saved: a cell saves at most "
                    + MAX_DISPLAYS + " displays and " + (MAX_DISPLAY_BYTES >> 20) + " MiB]");
        }
        if (callerInterrupted) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for a cell of workspace " + workspaceId + "; "
                    + (lost ? died ? "the kernel died meanwhile" : "its kernel did not stop the cell and was stopped"
                    : "the cell was interrupted"));
        }
        return new Outcome(cell.text(), exit, timedOut, truncated, lost);
    }
}
