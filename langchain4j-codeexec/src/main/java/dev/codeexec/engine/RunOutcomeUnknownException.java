package dev.codeexec.engine;

import java.util.Objects;

/**
 * The program <em>started</em>, then the connection to the backend broke (a stream to the Docker engine or to E2B was
 * cut, the engine died) before its exit was known. Unlike {@link BackendUnavailableException} this is not "nothing
 * ran": the program may have run to the end and changed files. Do <b>not</b> retry the same command blindly; look at
 * the workspace (or at {@link #partialResult()}) first.
 *
 * <p>{@link #partialResult()} holds what was received before the break: the output streams up to that point (bounded
 * by the run's output cap), exit code {@code -1}, and the time until the break.
 */
public class RunOutcomeUnknownException extends CodeExecException {

    private final RunResult partialResult;

    /**
     * @param message       why the outcome is unknown, without host secrets (for example "the stream from the Docker
     *                      engine broke")
     * @param partialResult the output received before the break; never null
     * @param cause         the transport failure
     */
    public RunOutcomeUnknownException(String message, RunResult partialResult, Throwable cause) {
        super(message, cause);
        this.partialResult = Objects.requireNonNull(partialResult, "partialResult");
    }

    /** The output received before the connection broke; its exit code is {@code -1}. */
    public RunResult partialResult() {
        return partialResult;
    }
}
