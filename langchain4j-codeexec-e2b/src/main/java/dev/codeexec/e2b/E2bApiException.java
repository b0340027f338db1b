package dev.codeexec.e2b;

import dev.codeexec.engine.BackendUnavailableException;

/**
 * E2B could not be used: the control plane or a sandbox's envd answered with an error that retrying did not cure
 * (429 and 5xx are retried with a bounded backoff first), could not be reached, or sent something this library cannot
 * read. An operator must act (check E2B's status, quotas and this engine's settings) or retry later. Subtypes narrow
 * it down; the message says what was tried and how often.
 */
public class E2bApiException extends BackendUnavailableException implements E2bError {

    private final int httpStatus;
    private final String errorCode;

    public E2bApiException(String message, int httpStatus, String errorCode) {
        super(message);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    public E2bApiException(String message, int httpStatus, String errorCode, Throwable cause) {
        super(message, cause);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    @Override
    public int httpStatus() {
        return httpStatus;
    }

    @Override
    public String errorCode() {
        return errorCode;
    }
}
