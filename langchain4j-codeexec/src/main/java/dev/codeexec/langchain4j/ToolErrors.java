package dev.codeexec.langchain4j;

import static dev.codeexec.langchain4j.ErrorText.clause;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.engine.WorkspaceFullException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.langchain4j.service.tool.ToolArgumentsErrorHandler;
import dev.langchain4j.service.tool.ToolErrorHandlerResult;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns every failure of a tool call into a {@link ToolResult#error} whose kind says what the model can do and whose
 * text says what to change. Exceptions never reach the model as stack traces or class names ({@link ErrorText});
 * failures this class does not know are logged and shown only as "failed unexpectedly", because their messages may
 * carry host details.
 *
 * <p>Two refusals get the same words whatever their source: every refusal because of a link ends with
 * {@link #linkGuidance()}, and a workspace held by a background session ({@link WorkspaceBusyException}) is
 * {@code busy}, with the session to poll or kill, never a policy refusal.
 */
final class ToolErrors {

    private static final Logger log = LoggerFactory.getLogger(ToolErrors.class);

    /** A message that speaks of a (symbolic) link: the engine refused because of one. */
    private static final Pattern ABOUT_A_LINK = Pattern.compile("(?i)\\b(?:sym)?links?\\b");

    /** What {@link CodeExecution#toolArgumentsErrorHandler()} answers for arguments LangChain4j cannot convert. */
    static final ToolArgumentsErrorHandler ARGUMENTS_ERROR_HANDLER = (error, context) -> {
        String tool = context.toolExecutionRequest() == null ? "the tool" : context.toolExecutionRequest().name();
        String msg = error.getMessage() == null ? "they do not fit the tool's parameters" : error.getMessage();
        return ToolErrorHandlerResult.text("error: " + ErrorText.forModel("invalid arguments for " + tool + ": "
                + msg + ". Nothing was run or changed; fix the arguments and call it again."));
    };

    private final ToolSettings settings;
    private final BackgroundSessions sessions;

    ToolErrors(ToolSettings settings, BackgroundSessions sessions) {
        this.settings = settings;
        this.sessions = sessions;
    }

    /**
     * The result for a failure of {@code tool}.
     *
     * @param call where the call ran, or null when it failed before that was known
     * @param e    what a {@link ToolHandler} or the call's resolution threw
     */
    ToolResult toResult(WorkspaceTool tool, ToolCall call, RuntimeException e) {
        String toolName = settings.name(tool);
        String message = e.getMessage();
        if (e instanceof InvalidArgument) {
            return ToolResult.error(ToolErrorKind.INVALID_ARGUMENT, clause(message)
                    + ". Nothing was run or changed; fix the arguments of " + toolName + " and call it again.");
        }
        if (e instanceof ToolRefusal r) {
            return ToolResult.error(r.kind(), message);
        }
        if (e instanceof WorkspaceBusyException busy) {
            return ToolResult.error(ToolErrorKind.BUSY, busy(toolName, call, busy));
        }
        if (e instanceof PathEscapeException) {
            return ToolResult.error(ToolErrorKind.PATH_ESCAPE, "the path leaves the workspace (" + clause(message)
                    + "). " + (isAboutALink(message) ? linkGuidance()
                    : "Use paths inside the workspace, such as work/... or out/...; nothing was changed."));
        }
        if (e instanceof PolicyViolationException) {
            return ToolResult.error(ToolErrorKind.POLICY, "refused by policy: " + clause(message) + ". "
                    + (isAboutALink(message) ? linkGuidance() : "Nothing was run; do not retry the same command."));
        }
        if (e instanceof UnsupportedCapabilityException) {
            return ToolResult.error(ToolErrorKind.UNSUPPORTED, message);
        }
        if (e instanceof WorkspaceGoneException) {
            return ToolResult.error(ToolErrorKind.WORKSPACE_GONE, "the workspace of this conversation is gone ("
                    + clause(message) + "). Files written earlier are lost; artifacts are not.");
        }
        if (e instanceof WorkspaceFullException) {
            return ToolResult.error(ToolErrorKind.WORKSPACE_FULL, clause(message) + ". The files already there "
                    + "are intact; delete what is no longer needed (for example with " + settings.name(WorkspaceTool.EXEC)
                    + ": rm work/<file>), then try again.");
        }
        if (e instanceof RunOutcomeUnknownException unknown) {
            log.warn("{}: run outcome unknown: {}", toolName, message);
            return ToolResult.error(ToolErrorKind.OUTCOME_UNKNOWN, outcomeUnknown(unknown));
        }
        if (e instanceof BackendUnavailableException) {
            log.warn("{}: backend unavailable: {}", toolName, message);
            return ToolResult.error(ToolErrorKind.BACKEND_UNAVAILABLE, "the execution backend is unavailable right "
                    + "now; try again later or answer without running code.");
        }
        if (e instanceof InvalidSpecException) {
            return ToolResult.error(ToolErrorKind.INVALID_REQUEST, isAboutALink(message) ? clause(message) + ". "
                    + linkGuidance() : message);
        }
        if (e instanceof CodeExecException) {
            return ToolResult.error(ToolErrorKind.FAILED, message);
        }
        // Unknown failures may carry host details in their messages: log them, tell the model only that it failed.
        log.error("{} failed unexpectedly", toolName, e);
        return ToolResult.error(ToolErrorKind.INTERNAL, toolName + " failed unexpectedly; the application log has "
                + "details.");
    }

    /**
     * The command ran, or may have: say so, give what was received, and never invite a blind retry of a command that
     * may have had effects.
     */
    private String outcomeUnknown(RunOutcomeUnknownException e) {
        RunResult partial = e.partialResult();
        StringBuilder sb = new StringBuilder("the command started, but the connection to the execution backend broke "
                + "before it finished (" + clause(e.getMessage()) + "): its outcome is unknown, and it may have "
                + "changed files. Check the workspace (for example with " + settings.name(WorkspaceTool.LIST_FILES)
                + " or " + settings.name(WorkspaceTool.READ_FILE) + ") before running it again; do not simply "
                + "retry it.");
        sb.append(partial.stdout().isEmpty() && partial.stderr().isEmpty() ? "\nNo output was received."
                : "\nOutput received before the break:");
        if (!partial.stdout().isEmpty()) {
            sb.append("\n--- stdout ---\n").append(partial.stdout());
        }
        if (!partial.stderr().isEmpty()) {
            sb.append("\n--- stderr ---\n").append(partial.stderr());
        }
        return sb.toString();
    }

    /** The one sentence every refusal because of a link ends with. */
    String linkGuidance() {
        return "Links are refused here when they lead out of the workspace, do not resolve, or stand where a real "
                + "file or folder is needed: name the real file or folder inside the workspace instead, or remove the "
                + "link with " + settings.name(WorkspaceTool.EXEC) + " (rm <link>) and put a real file or folder in "
                + "its place. Nothing was run or changed.";
    }

    static boolean isAboutALink(String message) {
        return message != null && ABOUT_A_LINK.matcher(message).find();
    }

    /** Which session holds the workspace, in the ids the model knows, and what to do about it. */
    private String busy(String toolName, ToolCall call, WorkspaceBusyException e) {
        List<String> ids = call == null ? List.of() : sessions.idsOf(call.engine(), call.key(), e.sessionIds());
        if (ids.isEmpty() && call != null) {
            ids = sessions.runningIdsFor(call.engine(), call.key());
        }
        String which = ids.isEmpty() ? "a background session that is still running"
                : ids.size() == 1 ? "background session " + ids.get(0) + ", which is still running"
                : "background sessions " + String.join(", ", ids) + ", which are still running";
        String session = ids.size() == 1 ? ids.get(0) : "the session";
        return "the workspace is busy with " + which + ": on this backend nothing else can run in the workspace, "
                + "and its files cannot be read or written, while a background session of it runs. Read "
                + session + "'s output with " + settings.name(WorkspaceTool.WRITE_STDIN) + " (empty chars) until it "
                + "exits, or stop it with " + settings.name(WorkspaceTool.KILL_SESSION) + ", then call " + toolName
                + " again. Nothing was run or changed.";
    }
}
