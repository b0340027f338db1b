package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.BoundedOutput;
import java.time.Duration;
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
 * </ul>
 *
 * <p>Lock rule: {@code lock} serialises starts, cells and restarts of this workspace (the kernel runs one cell at a
 * time anyway); it is held while waiting for the kernel and taken by no other thread of this package, in particular
 * never by a socket reader. {@link #kernel} is volatile so that a restart or removal can stop a kernel without
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
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Kernel kernel;
    private volatile boolean closed;

    KernelSlot(String workspaceId, Starter starter, ObjectMapper json, Duration interruptGrace) {
        this.workspaceId = workspaceId;
        this.starter = starter;
        this.json = json;
        this.interruptGrace = interruptGrace;
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
            startLocked();
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
