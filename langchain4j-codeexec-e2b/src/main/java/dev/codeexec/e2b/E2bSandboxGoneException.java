package dev.codeexec.e2b;

import dev.codeexec.engine.WorkspaceGoneException;

/**
 * The sandbox no longer exists: it reached its timeout, was killed (by this engine, another client or E2B), or was
 * never there (HTTP 404 or 410 from the control plane, "sandbox not found" from the sandbox proxy), possibly while a
 * program ran in it. Its workspaces and files are gone: create a new workspace. Files that must survive belong in an
 * artifact service.
 */
public final class E2bSandboxGoneException extends WorkspaceGoneException implements E2bError {

    private final String sandboxId;
    private final int httpStatus;
    private final String errorCode;

    public E2bSandboxGoneException(String message, String sandboxId, int httpStatus, String errorCode) {
        super(message);
        this.sandboxId = sandboxId;
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    /** The id of the sandbox that is gone. */
    public String sandboxId() {
        return sandboxId;
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
