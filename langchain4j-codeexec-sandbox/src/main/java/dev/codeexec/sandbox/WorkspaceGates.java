package dev.codeexec.sandbox;

import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import java.util.List;
import java.util.Map;
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
 */
final class WorkspaceGates {

    private final Map<String, Gate> gates = new ConcurrentHashMap<>();

    private static final class Gate {
        final ReentrantLock lock = new ReentrantLock();
        final Set<ProgramSession> sessions = ConcurrentHashMap.newKeySet();
    }

    /**
     * Runs {@code action} alone in the workspace.
     *
     * @throws WorkspaceBusyException while a background session of the workspace is alive; it names the sessions
     */
    <T> T exclusive(Workspace ws, Supplier<T> action) {
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
            return action.get();
        } finally {
            g.lock.unlock();
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
