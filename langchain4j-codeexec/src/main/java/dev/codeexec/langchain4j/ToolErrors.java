package dev.codeexec.langchain4j;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns every failure of a tool call into a {@link ToolResult#error} whose kind says what the model can do and whose
 * text says what to change. Exceptions never reach the model as stack traces; failures this class does not know are
 * logged and shown only as "failed unexpectedly", because their messages may carry host details.
 */
final class ToolErrors {

    private static final Logger log = LoggerFactory.getLogger(ToolErrors.class);

    private ToolErrors() {
    }

    /**
     * The result for a failure of the tool the model knows as {@code toolName}.
     *
     * @param e what a {@link ToolHandler} or the call's resolution threw
     */
    static ToolResult toResult(String toolName, RuntimeException e) {
        if (e instanceof InvalidArgument) {
            return ToolResult.error("invalid_argument", clause(e.getMessage())
                    + ". Nothing was run or changed; fix the arguments of " + toolName + " and call it again.");
        }
        if (e instanceof ToolRefusal r) {
            return ToolResult.error(r.kind(), r.getMessage());
        }
        if (e instanceof PathEscapeException) {
            return ToolResult.error("path_escape", "the path leaves the workspace (" + clause(e.getMessage())
                    + "). Use paths inside the workspace, such as work/... or out/...; nothing was changed.");
        }
        if (e instanceof PolicyViolationException) {
            return ToolResult.error("policy", "refused by policy: " + clause(e.getMessage())
                    + ". Nothing was run; do not retry the same command.");
        }
        if (e instanceof UnsupportedCapabilityException) {
            return ToolResult.error("unsupported", e.getMessage());
        }
        if (e instanceof WorkspaceGoneException) {
            return ToolResult.error("workspace_gone", "the workspace of this conversation is gone ("
                    + clause(e.getMessage()) + "). Files written earlier are lost; artifacts are not.");
        }
        if (e instanceof BackendUnavailableException) {
            log.warn("{}: backend unavailable: {}", toolName, e.getMessage());
            return ToolResult.error("backend_unavailable", "the execution backend is unavailable right now; try "
                    + "again later or answer without running code.");
        }
        if (e instanceof InvalidSpecException) {
            return ToolResult.error("invalid_request", e.getMessage());
        }
        if (e instanceof CodeExecException) {
            return ToolResult.error("failed", e.getMessage());
        }
        // Unknown failures may carry host details in their messages: log them, tell the model only the kind.
        log.error("{} failed unexpectedly", toolName, e);
        return ToolResult.error("internal", toolName + " failed unexpectedly (" + e.getClass().getSimpleName()
                + "); the application log has details.");
    }

    /** A message without its final period, to continue the sentence. */
    static String clause(String message) {
        String m = message == null ? "" : message.strip();
        return m.endsWith(".") ? m.substring(0, m.length() - 1) : m;
    }
}
