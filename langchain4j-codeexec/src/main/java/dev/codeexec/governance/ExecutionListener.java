package dev.codeexec.governance;

/**
 * Receives {@link ExecutionEvent}s: configured with {@code CodeExecution.builder().listener(...)}. Override
 * {@link #onEvent(ExecutionEvent)} to see every event, or only the typed methods of the events you want.
 *
 * <p>Contract: listeners are called synchronously on the thread of the tool call, so keep them fast (hand slow work
 * to a queue); {@link ExecutionEvent.Connection} events come on the egress proxy's threads. An exception a listener throws never breaks a run or changes a result: it is logged (the first one at
 * WARN, with its stack trace; later ones at DEBUG) and the listener keeps receiving events. A listener must not call
 * back into the tools. Called from many conversations at once: implementations must be thread-safe.
 */
public interface ExecutionListener {

    /** Every event; the default passes it to the typed method of its kind. */
    default void onEvent(ExecutionEvent event) {
        if (event instanceof ExecutionEvent.WorkspaceCreated e) {
            workspaceCreated(e);
        } else if (event instanceof ExecutionEvent.WorkspaceClosed e) {
            workspaceClosed(e);
        } else if (event instanceof ExecutionEvent.RunStarted e) {
            runStarted(e);
        } else if (event instanceof ExecutionEvent.RunFinished e) {
            runFinished(e);
        } else if (event instanceof ExecutionEvent.SessionStarted e) {
            sessionStarted(e);
        } else if (event instanceof ExecutionEvent.SessionEnded e) {
            sessionEnded(e);
        } else if (event instanceof ExecutionEvent.FileWritten e) {
            fileWritten(e);
        } else if (event instanceof ExecutionEvent.ArtifactSaved e) {
            artifactSaved(e);
        } else if (event instanceof ExecutionEvent.Refusal e) {
            refusal(e);
        } else if (event instanceof ExecutionEvent.Connection e) {
            connection(e);
        }
    }

    default void workspaceCreated(ExecutionEvent.WorkspaceCreated event) {
    }

    default void workspaceClosed(ExecutionEvent.WorkspaceClosed event) {
    }

    default void runStarted(ExecutionEvent.RunStarted event) {
    }

    default void runFinished(ExecutionEvent.RunFinished event) {
    }

    default void sessionStarted(ExecutionEvent.SessionStarted event) {
    }

    default void sessionEnded(ExecutionEvent.SessionEnded event) {
    }

    default void fileWritten(ExecutionEvent.FileWritten event) {
    }

    default void artifactSaved(ExecutionEvent.ArtifactSaved event) {
    }

    default void refusal(ExecutionEvent.Refusal event) {
    }

    /** A program's connection through the engine's egress proxy; called on the proxy's threads. */
    default void connection(ExecutionEvent.Connection event) {
    }
}
