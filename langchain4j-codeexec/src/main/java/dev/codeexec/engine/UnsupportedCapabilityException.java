package dev.codeexec.engine;

/**
 * The backend cannot honour a requirement safely (a resource limit it cannot enforce, a clean environment it cannot provide, interactive sessions it does not offer), so it refuses rather than run with weaker guarantees. Choose a backend whose {@link Capabilities} include it.
 */
public class UnsupportedCapabilityException extends CodeExecException {

    public UnsupportedCapabilityException(String message) {
        super(message);
    }

    public UnsupportedCapabilityException(String message, Throwable cause) {
        super(message, cause);
    }
}
