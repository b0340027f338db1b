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
 * tool call of an invocation, and the workspace marked as changed for its change tracker ({@link ChangeTrackers}) by
 * anything that may change files.
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

    /** Runs a call that may change files on the conversation's workspace, under its lock. */
    ToolResult inWorkspace(ToolCall call, Function<Workspace, ToolResult> fn) {
        return inWorkspace(call, false, fn);
    }

    /**
     * Like {@link #inWorkspace}, for calls that only read, or that run a program through {@link ChangeTrackers} (which
     * takes in what changed before the run itself).
     */
    ToolResult inWorkspaceKeepingListing(ToolCall call, Function<Workspace, ToolResult> fn) {
        return inWorkspace(call, true, fn);
    }

    private ToolResult inWorkspace(ToolCall call, boolean keepsListing, Function<Workspace, ToolResult> fn) {
        // The one place every call that runs or changes something passes after its handler validated it: asked here,
        // before the lock, a call waiting for its approval holds up nothing but itself.
        call.review();
        return workspaces.withWorkspace(call.engine(), call.key(), toolName(call), ws -> {
            List<AttachmentStager.Staged> staged = attachments.stageOnce(call, ws);
            if (staged != null || !keepsListing) {
                changes.mayHaveChanged(call.engine(), ws);
            }
            String note = InvocationAttachments.describe(staged);
            ToolResult r = fn.apply(ws);
            return note == null ? r : new ToolResult(note + "\n" + r.text(), r.isError(), r.attributes());
        });
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
