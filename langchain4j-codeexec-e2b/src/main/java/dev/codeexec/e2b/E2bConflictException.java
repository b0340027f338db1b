package dev.codeexec.e2b;

import dev.codeexec.engine.CodeExecException;

/**
 * The sandbox is not in a state that allows the request (HTTP 409): pausing a sandbox that is already paused or
 * cannot be paused, for example. Not retried; read the sandbox's state ({@link E2bControlPlane#get}) and decide.
 */
public final class E2bConflictException extends CodeExecException implements E2bError {

    private final int httpStatus;
    private final String errorCode;

    public E2bConflictException(String message, int httpStatus, String errorCode) {
        super(message);
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
