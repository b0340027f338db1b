package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.langchain4j.data.message.UserMessage;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Stages the files attached to the user's message on the first tool call of each invocation (per workspace key), and
 * words what happened for the front of that call's result.
 */
final class InvocationAttachments {

    private static final int MAX_REMEMBERED_INVOCATIONS = 1024;

    private final AttachmentStager stager;
    /** Invocations whose attachments were already staged, per workspace key; bounded, oldest forgotten first. */
    private final Set<String> stagedInvocations = Collections.synchronizedSet(Collections.newSetFromMap(
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > MAX_REMEMBERED_INVOCATIONS;
                }
            }));

    InvocationAttachments(AttachmentStager stager) {
        this.stager = stager;
    }

    /**
     * Stages the call's attachments unless this invocation already did; the caller holds the workspace lock.
     *
     * @return what was staged, or null when nothing was attempted (no files, or staged before)
     * @throws WorkspaceBusyException when a background session holds the workspace; the next call tries again
     */
    List<AttachmentStager.Staged> stageOnce(ToolCall call, Workspace ws) {
        UserMessage message = call.userMessage();
        if (message == null || !AttachmentStager.hasFiles(message)) {
            return null;
        }
        String marker = call.key() + "\u0000" + (call.invocationId() == null ? System.identityHashCode(message)
                : call.invocationId());
        if (!stagedInvocations.add(marker)) {
            return null;
        }
        try {
            return stager.stage(call.engine(), ws, message);
        } catch (WorkspaceBusyException e) {
            stagedInvocations.remove(marker); // staged by the next call of the invocation, once the workspace is free
            throw e;
        }
    }

    /** Stages a message's files for application code; the caller holds the workspace lock. */
    List<AttachmentStager.Staged> stage(Engine engine, Workspace ws, UserMessage message) {
        return stager.stage(engine, ws, message);
    }

    /** The note put in front of a result, one line per file; null when there was nothing to stage. */
    static String describe(List<AttachmentStager.Staged> staged) {
        if (staged == null || staged.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder("Files attached to the user's message:");
        for (AttachmentStager.Staged s : staged) {
            if (s.staged()) {
                sb.append("\n- ").append(s.path());
                if (s.sizeBytes() >= 0) {
                    sb.append(" (").append(s.sizeBytes()).append(" bytes)");
                }
            } else {
                sb.append("\n- ").append(s.name()).append(": not staged, because ").append(s.notStagedReason());
            }
        }
        return sb.toString();
    }
}
