package dev.codeexec.engine;

import java.util.List;

/**
 * The workspace is busy: a background session of it ({@link InteractiveProgramRunner}) is still running, and this
 * engine lets nothing else run in the workspace, nor read or write its files from outside, while one does. The
 * sandbox engine works so because a running program could otherwise swap a checked directory for a link and redirect
 * the engine's host-side operation.
 *
 * <p>Not a policy decision and not a fault of the request: the same call succeeds once the session has exited or was
 * killed. Read the session's output until it exits ({@link ProgramSession#await}), or {@link ProgramSession#kill kill}
 * it, then retry. Nothing was run or changed.
 */
public class WorkspaceBusyException extends CodeExecException {

    private final List<String> sessionIds;

    /**
     * @param sessionIds the {@link ProgramSession#id() ids} of the sessions that hold the workspace; may be empty
     */
    public WorkspaceBusyException(String message, List<String> sessionIds) {
        super(message);
        this.sessionIds = List.copyOf(sessionIds);
    }

    /** The ids ({@link ProgramSession#id()}) of the running sessions that hold the workspace, possibly empty. */
    public List<String> sessionIds() {
        return sessionIds;
    }
}
