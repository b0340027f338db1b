package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.langchain4j.data.message.UserMessage;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * How tool calls and application code get at a conversation's workspace: created on first use, one call at a time
 * per workspace ({@link ConversationWorkspaces} holds the locks), the user's attached files staged before the first
 * tool call of an invocation ({@link AttachmentsStep}), and application code's use marked as a change for the change
 * tracker ({@link ChangeTrackers}).
 */
final class ToolWorkspaces implements AutoCloseable {

    private final ConversationWorkspaces workspaces;
    private final InvocationAttachments attachments;
    private final ChangeTrackers changes;
    private final ToolSettings settings;

    ToolWorkspaces(ConversationWorkspaces workspaces, InvocationAttachments attachments, ChangeTrackers changes,
                   ToolSettings settings) {
        this.workspaces = workspaces;
        this.attachments = attachments;
        this.changes = changes;
        this.settings = settings;
    }

    /**
     * Runs the rest of a tool call on the conversation's workspace, created on first use, under its lock
     * ({@link WorkspaceLockStep}).
     */
    <T> T locked(ToolCall call, Function<Workspace, T> fn) {
        return workspaces.withWorkspace(call.engine(), call.key(), toolName(call), fn);
    }

    /**
     * Stages the invocation's attached files the first time one of its calls reaches the workspace; the caller holds
     * the lock ({@link AttachmentsStep}).
     *
     * @return what was staged, or null when nothing was to be staged
     */
    List<AttachmentStager.Staged> stageOnce(ToolCall call, Workspace ws) {
        return attachments.stageOnce(call, ws);
    }

    private String toolName(ToolCall call) {
        return settings.name(call.tool());
    }

    /** The key's workspace on {@code engine} if it exists; never creates one. */
    Optional<Workspace> find(Engine engine, String key) {
        return workspaces.find(engine, key);
    }

    /** Runs {@code fn} on a workspace under its lock, without staging; for application code. */
    <T> T withWorkspace(Engine engine, String key, Function<Workspace, T> fn) {
        return workspaces.withWorkspace(engine, key, null, ws -> {
            changes.mayHaveChanged(engine, ws);
            return fn.apply(ws);
        });
    }

    /** Stages a message's files for application code; the caller holds the workspace lock. */
    List<AttachmentStager.Staged> stageAttachments(Engine engine, Workspace ws, UserMessage message) {
        return attachments.stage(engine, ws, message);
    }

    /** Removes a conversation's workspaces (on every engine). */
    void close(String key) {
        workspaces.close(key);
    }

    @Override
    public void close() {
        workspaces.close();
    }
}
