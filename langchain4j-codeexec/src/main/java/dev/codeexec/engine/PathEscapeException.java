package dev.codeexec.engine;

/**
 * A path would leave the workspace: it is absolute, contains {@code ..}, or passes through a symbolic link that resolves outside. The operation did nothing. Do not retry; use a workspace-relative path.
 */
public class PathEscapeException extends InvalidSpecException {

    public PathEscapeException(String message) {
        super(message);
    }

    public PathEscapeException(String message, Throwable cause) {
        super(message, cause);
    }
}
