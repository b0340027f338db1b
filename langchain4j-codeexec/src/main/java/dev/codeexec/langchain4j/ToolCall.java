package dev.codeexec.langchain4j;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.RunChanges;
import dev.langchain4j.data.message.UserMessage;
import java.time.Duration;
import java.util.List;

/**
 * One tool call: where it runs (the engine, the conversation's workspace key, the invocation it belongs to, for
 * staging the user's attached files once per invocation), which tool with which arguments, and the way every program
 * of the call is started. Built by {@link ToolCallResolver}.
 *
 * <p>Handlers start programs through {@link #runProgram}, {@link #executeCode} and {@link #startSession}, never on the
 * engine directly: that is where the approver's changes apply and where run events are emitted
 * ({@link ToolGovernance}). The approval itself happens once, in {@link ApprovalStep}, after the handler validated
 * the arguments and before the workspace is taken.
 */
final class ToolCall {

    private final Engine engine;
    private final String key;
    private final UserMessage userMessage;
    private final String invocationId;
    private final WorkspaceTool tool;
    private final ToolArguments args;
    private final ToolGovernance governance;
    /** Set once by the approval, on the calling thread, before the handler's work starts anything. */
    private RunChanges changes;
    /** The life of the background session this call started, for its event. */
    private Duration sessionTimeout;
    /** The folders a foreground run lists when it ends, when its engine can ({@link ChangeTrackers}); or null. */
    private List<String> listFolders;
    private int listMaxEntries;
    /** What the call's foreground runs listed: the last run's listing, null after a run that listed nothing. */
    private FolderSnapshot listed;
    private int foregroundRuns;

    /**
     * @param userMessage  the invocation's user message, or null when the context carries none
     * @param invocationId the invocation's id, or null when the context carries none
     */
    ToolCall(Engine engine, String key, UserMessage userMessage, String invocationId, WorkspaceTool tool,
             ToolArguments args, ToolGovernance governance) {
        this.engine = engine;
        this.key = key;
        this.userMessage = userMessage;
        this.invocationId = invocationId;
        this.tool = tool;
        this.args = args;
        this.governance = governance;
    }

    Engine engine() {
        return engine;
    }

    String key() {
        return key;
    }

    UserMessage userMessage() {
        return userMessage;
    }

    String invocationId() {
        return invocationId;
    }

    WorkspaceTool tool() {
        return tool;
    }

    ToolArguments args() {
        return args;
    }

    /** Records the approver's changes to the call's runs ({@link ApprovalStep}); null for none. */
    void approved(RunChanges changes) {
        this.changes = changes;
    }

    /** Runs a program in the foreground, with the approver's changes, between a run-started and a run-finished event. */
    RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        foregroundRuns++;
        listed = null;
        ListedRun r = governance.runProgram(this, ws, capped(spec), listFolders, listMaxEntries);
        listed = r.listing();
        return r.result();
    }

    /**
     * Asks the call's foreground runs to list {@code folders} when they end, where the engine's runner can
     * ({@link ListingProgramRunner}), for {@link #takeListing()}.
     */
    void listAfterRuns(List<String> folders, int maxEntries) {
        listFolders = List.copyOf(folders);
        listMaxEntries = maxEntries;
        listed = null;
        foregroundRuns = 0;
    }

    /**
     * What the call's one foreground run listed when it ended; null when it listed nothing, or when the call ran
     * no program or several (then only a look at the workspace tells what all of them changed). Ends the request.
     */
    FolderSnapshot takeListing() {
        FolderSnapshot s = foregroundRuns == 1 ? listed : null;
        listFolders = null;
        listed = null;
        foregroundRuns = 0;
        return s;
    }

    /** Runs code with the engine's executor, likewise. */
    CodeExecutionResult executeCode(Workspace ws, CodeExecutionInput input) {
        foregroundRuns++; // lists nothing: the tracker looks
        listed = null;
        Duration t = capped(input.timeout());
        return governance.executeCode(this, ws, t == input.timeout() ? input
                : new CodeExecutionInput(input.codeBlocks(), input.executionId(), t));
    }

    /** Starts a background session with the approver's changes; its event follows once it has an id. */
    ProgramSession startSession(InteractiveProgramRunner runner, Workspace ws, RunProgramSpec spec) {
        foregroundRuns += 2; // goes on after the call: what the call changed takes a look
        RunProgramSpec s = capped(spec);
        sessionTimeout = s.timeout();
        return runner.startProgram(ws, s);
    }

    Duration sessionTimeout() {
        return sessionTimeout;
    }

    private RunProgramSpec capped(RunProgramSpec spec) {
        Duration t = capped(spec.timeout());
        return t == spec.timeout() ? spec : spec.toBuilder().timeout(t).build();
    }

    /** The shorter of {@code timeout} (null: the engine's default) and the approver's limit. */
    private Duration capped(Duration timeout) {
        Duration cap = changes == null ? null : changes.timeout().orElse(null);
        if (cap == null || (timeout != null && timeout.compareTo(cap) <= 0)) {
            return timeout;
        }
        return cap;
    }
}
