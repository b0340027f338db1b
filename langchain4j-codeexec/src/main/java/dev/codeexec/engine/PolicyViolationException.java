package dev.codeexec.engine;

/**
 * A configured policy (command policy, permission profile, input roots) refused the request before anything ran. Do not retry unchanged.
 */
public class PolicyViolationException extends CodeExecException {

    public PolicyViolationException(String message) {
        super(message);
    }

    public PolicyViolationException(String message, Throwable cause) {
        super(message, cause);
    }
}
