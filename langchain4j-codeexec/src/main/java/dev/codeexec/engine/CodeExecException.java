package dev.codeexec.engine;

/**
 * Root of every exception this library throws when code <em>could not be run</em>. A program that ran and failed is a
 * result ({@link RunResult#exitCode()}), never an exception. Subtypes say what the caller can do:
 * <ul>
 *   <li>{@link InvalidSpecException}: fix the request (bad argument, bad path, unknown session);</li>
 *   <li>{@link PathEscapeException}: the path leaves the workspace; do not retry;</li>
 *   <li>{@link PolicyViolationException}: a configured policy refused it; do not retry as is;</li>
 *   <li>{@link UnsupportedCapabilityException}: this backend cannot do it safely; choose another backend;</li>
 *   <li>{@link BackendUnavailableException}: the backend is missing or broken; an operator must act, or retry later;</li>
 *   <li>{@link WorkspaceGoneException}: the workspace was removed or closed; create a new one;</li>
 *   <li>{@link WorkspaceBusyException}: a background session holds the workspace; wait for it or kill it;</li>
 *   <li>{@link WorkspaceFullException}: the workspace's disk quota is used up; delete files, then retry;</li>
 *   <li>{@link RunOutcomeUnknownException}: the exception to "could not be run": the program started, then the
 *       connection to the backend broke; it may have had effects, so look before retrying.</li>
 * </ul>
 * Messages never contain host secrets; they may name workspace-relative paths.
 */
public class CodeExecException extends RuntimeException {

    public CodeExecException(String message) {
        super(message);
    }

    public CodeExecException(String message, Throwable cause) {
        super(message, cause);
    }
}
