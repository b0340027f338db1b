package dev.codeexec.langchain4j;

import java.util.List;

/**
 * Stages the user's attached files before the first workspace call of an invocation, notes them at the top of the
 * result, and marks the workspace changed for its change tracker when files were staged or the work changes files.
 */
final class AttachmentsStep implements ToolStep {

    private final ToolWorkspaces workspaces;
    private final ChangeTrackers changes;

    AttachmentsStep(ToolWorkspaces workspaces, ChangeTrackers changes) {
        this.workspaces = workspaces;
        this.changes = changes;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (chain.workspace() == null) {
            return chain.proceed();
        }
        ToolCall call = chain.call();
        List<AttachmentStager.Staged> staged = workspaces.stageOnce(call, chain.workspace());
        if (staged != null || chain.work().changesFiles()) {
            changes.mayHaveChanged(call.engine(), chain.workspace());
        }
        String note = InvocationAttachments.describe(staged);
        ToolResult r = chain.proceed();
        return note == null ? r : new ToolResult(note + "\n" + r.text(), r.isError(), r.attributes());
    }
}
