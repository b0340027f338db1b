package dev.codeexec.engine;

/**
 * The workspace no longer exists: it was cleaned up, closed, reaped after idling, or removed behind the engine's back. Create a new workspace; files that must survive belong in an artifact service.
 */
public class WorkspaceGoneException extends CodeExecException {

    public WorkspaceGoneException(String message) {
        super(message);
    }

    public WorkspaceGoneException(String message, Throwable cause) {
        super(message, cause);
    }
}
