package dev.codeexec.e2b;

/**
 * What every E2B failure carries besides its message: the machine-readable parts of the answer that caused it, for
 * callers that branch on them (a dashboard, a retry policy of their own). Implemented by every exception of this
 * module; each exception's type says what the caller can do.
 */
public interface E2bError {

    /** The HTTP status of the answer that failed, or 0 when there was none (a connection failure, a missing key). */
    int httpStatus();

    /**
     * The service's own code, when it sent one: E2B's {@code error_code} (for example
     * {@code sandbox_capacity_unavailable}) or envd's Connect code (for example {@code not_found},
     * {@code deadline_exceeded}); null otherwise.
     */
    String errorCode();
}
