package dev.codeexec.engine;

/**
 * The backend cannot run anything: a required program is missing, a probe failed, the daemon or service cannot be reached. The message says what was tried and what to fix.
 */
public class BackendUnavailableException extends CodeExecException {

    public BackendUnavailableException(String message) {
        super(message);
    }

    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
