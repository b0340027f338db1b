package dev.codeexec.sandbox;

import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One program at a time per workspace, and no host-side file operation while one runs.
 *
 * <p>Why: the host side (the engine's file operations, the mount planning and pinning of a run) works on workspace
 * paths by name, and Java cannot do every step relative to directory handles (there is no {@code mkdirat}). A program
 * running in the same workspace at that moment could swap a checked directory for a link and redirect the host-side
 * step outside the workspace. Sandboxed programs cannot outlive their run (the run's PID namespace dies with it), so
 * the only programs that can run concurrently are background sessions and overlapping runs. This gate serialises
 * runs and file operations of a workspace, and refuses both while one of its background sessions is alive: the
 * workspace is busy ({@link WorkspaceBusyException}), which is no policy decision, and the same call succeeds once the
 * session is gone.
 *
 * <p>A workspace's python kernel ({@link SandboxKernels}) is a program of the workspace that lives between its cells,
 * and code a cell left behind (a thread, a child process) runs on between them. It is the gate's <em>occupant</em>:
 * every section of the workspace (a file operation, a run and its planning) runs with the occupant paused
 * ({@link Occupant#pause()}: none of its processes runs), and only the occupant's own turns ({@link #occupantTurn},
 * its cells) run with it awake; a section nested in a turn (a rich output the cell left, saved under {@code out/})
 * pauses it again. One kind of section may first try a check that no process can mislead with the occupant awake
 * ({@link #exclusiveUnlessSettled}: whether {@code out/} is empty after a cell) and pauses it only when that check
 * cannot answer.
 *
 * <p>Threads: sections of a workspace run one at a time, each in the caller's thread, under the workspace's lock; the
 * occupant is paused and resumed only by the thread holding the lock. {@link #occupy} and {@link #vacate} may come
 * from any thread (a kernel's start comes within a turn, its end from whoever notices it).
 */
final class WorkspaceGates {

    private final Map<String, Gate> gates = new ConcurrentHashMap<>();

    /** A long-lived program of the workspace that must not run while the host works on the workspace. */
    interface Occupant {

        /**
         * Returns once none of the occupant's processes runs (or none is left).
         *
         * @throws dev.codeexec.engine.BackendUnavailableException when it can be neither paused nor ended: the section
         *                                                         must not run
         */
        void pause();

        /** Lets the occupant's processes run again. */
        void resume();
    }

    private static final class Gate {
        final ReentrantLock lock = new ReentrantLock();
        final Set<ProgramSession> sessions = ConcurrentHashMap.newKeySet();
        volatile Occupant occupant;
        /** The occupant paused for these many nested sections. Guarded by {@code lock}. */
        int pauses;
        /** The occupant that {@code pauses} counts for. Guarded by {@code lock}. */
        Occupant paused;
    }

    /**
     * Runs {@code action} alone in the workspace, with its occupant (if any) paused.
     *
     * @throws WorkspaceBusyException while a background session of the workspace is alive; it names the sessions
     */
    <T> T exclusive(Workspace ws, Supplier<T> action) {
        return section(ws, null, action, false);
    }

    /**
     * Like {@link #exclusive}, but first asks {@code awake} for the answer with the occupant left running: a check that
     * no process of the workspace can mislead (it follows no name a process could redirect, and any answer it gives
     * is one {@code action} could have given at that instant). When it answers, the occupant is not paused at all;
     * otherwise {@code action} runs as in {@link #exclusive}. Both run alone in the workspace, under its lock.
     *
     * @throws WorkspaceBusyException while a background session of the workspace is alive
     */
    <T> T exclusiveUnlessSettled(Workspace ws, Supplier<Optional<T>> awake, Supplier<T> action) {
        return section(ws, awake, action, false);
    }

    /**
     * Runs a turn of the workspace's occupant (a cell) alone in the workspace, with the occupant awake; sections nested
     * in it pause it again.
     *
     * @throws WorkspaceBusyException while a background session of the workspace is alive
     */
    <T> T occupantTurn(Workspace ws, Supplier<T> action) {
        return section(ws, null, action, true);
    }

    private <T> T section(Workspace ws, Supplier<Optional<T>> awake, Supplier<T> action, boolean turn) {
        Gate g = gates.computeIfAbsent(ws.id(), k -> new Gate());
        g.lock.lock();
        try {
            g.sessions.removeIf(s -> s.exitCode().isPresent());
            if (!g.sessions.isEmpty()) {
                List<String> ids = g.sessions.stream().map(ProgramSession::id).sorted().toList();
                throw new WorkspaceBusyException("a background session of this workspace is still running ("
                        + String.join(", ", ids) + "); on the sandbox backend nothing else may run in the workspace, "
                        + "and its files cannot be read or written from outside, until the session ends or is killed "
                        + "(a running program could otherwise redirect those operations). Use the session, or kill "
                        + "it first.", ids);
            }
            if (!turn) {
                if (awake != null && g.pauses == 0) {
                    Optional<T> answer = awake.get();
                    if (answer.isPresent()) {
                        return answer.get();
                    }
                }
                pause(g);
                try {
                    return action.get();
                } finally {
                    resume(g);
                }
            }
            // The occupant's turn: awake for it, paused again afterwards when an outer section had paused it.
            int outer = g.pauses;
            Occupant was = g.paused;
            g.pauses = 0;
            g.paused = null;
            if (was != null) {
                was.resume();
            }
            try {
                return action.get();
            } finally {
                Occupant now = g.occupant;
                if (was != null && now != null) {
                    now.pause();
                    g.paused = now;
                    g.pauses = outer;
                }
            }
        } finally {
            g.lock.unlock();
        }
    }

    /** {@code occupant} lives in the workspace from now on, until {@link #vacate}. */
    void occupy(Workspace ws, Occupant occupant) {
        gates.computeIfAbsent(ws.id(), k -> new Gate()).occupant = occupant;
    }

    /** {@code occupant} is gone (its processes ended): nothing to pause any more. */
    void vacate(Workspace ws, Occupant occupant) {
        Gate g = gates.get(ws.id());
        if (g != null && g.occupant == occupant) {
            g.occupant = null;
        }
    }

    /** The first of nested sections pauses the occupant, if there is one. */
    private static void pause(Gate g) {
        if (g.pauses > 0) {
            g.pauses++;
            return;
        }
        Occupant o = g.occupant;
        if (o != null) {
            o.pause();
            g.paused = o;
            g.pauses = 1;
        }
    }

    /** The last of nested sections resumes the occupant it paused. */
    private static void resume(Gate g) {
        if (g.pauses == 0) {
            return;
        }
        if (--g.pauses == 0) {
            Occupant o = g.paused;
            g.paused = null;
            o.resume();
        }
    }

    void exclusiveRun(Workspace ws, Runnable action) {
        exclusive(ws, () -> {
            action.run();
            return null;
        });
    }

    /** Starts a session alone in the workspace; it counts as alive until its program exits. */
    ProgramSession startSession(Workspace ws, Supplier<ProgramSession> start) {
        return exclusive(ws, () -> {
            ProgramSession s = start.get();
            gates.get(ws.id()).sessions.add(s);
            return s;
        });
    }

    /** The workspace's live sessions (for cleanup, which kills them before deleting anything). */
    List<ProgramSession> sessions(Workspace ws) {
        Gate g = gates.get(ws.id());
        return g == null ? List.of() : List.copyOf(g.sessions);
    }

    void forget(Workspace ws) {
        gates.remove(ws.id());
    }
}
