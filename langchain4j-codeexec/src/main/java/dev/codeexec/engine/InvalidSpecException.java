package dev.codeexec.engine;

/**
 * A request is malformed: a missing or blank command, a negative timeout, an unknown session, a glob where a path is needed. Fix the request; retrying it unchanged fails again.
 */
public class InvalidSpecException extends CodeExecException {

    public InvalidSpecException(String message) {
        super(message);
    }

    public InvalidSpecException(String message, Throwable cause) {
        super(message, cause);
    }
}
