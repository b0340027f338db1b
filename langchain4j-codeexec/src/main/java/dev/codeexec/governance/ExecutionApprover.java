package dev.codeexec.governance;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Decides whether a tool call may run a command, run code, write a file or save an artifact, before anything runs or
 * changes: configured with {@code CodeExecution.builder().approver(...)}. It sees the {@link ApprovalRequest} (tool,
 * conversation, command line and parsed command, code, path, engine and its capabilities) and answers
 * {@link ApprovalDecision#allow()}, {@link ApprovalDecision#deny(String)} (the model reads the reason) or
 * {@link ApprovalDecision#allowWith(RunChanges)}.
 *
 * <p>The answer may come later: a human approving in a UI completes the stage when they click. {@code review} is
 * called on an approval thread ({@code codeexec-approval-N}) while the tool call waits, at most the configured
 * approval timeout, and other conversations go on meanwhile. Bounded by construction: no answer within the timeout
 * (the stage is then cancelled, and an approver still blocked in {@code review} is interrupted), an exceptionally
 * completed or cancelled stage, a {@code null} answer, or an approver that throws all deny the call, with a clear
 * result for the model (and the failure in the application's log). A denied call runs nothing and changes nothing.
 *
 * <p>Called for many conversations at once: implementations must be thread-safe.
 * Ready-made approvers are in {@link ExecutionApprovers}.
 *
 * <pre>{@code
 * ExecutionApprover approver = ExecutionApprovers.askOutsideAllowList(
 *         List.of("ls", "cat", "python3"),
 *         request -> ui.ask(request.conversationId(), request.commandLine().orElse(""))   // a CompletionStage
 *                 .thenApply(ok -> ok ? ApprovalDecision.allow() : ApprovalDecision.deny("the user said no")));
 * }</pre>
 */
@FunctionalInterface
public interface ExecutionApprover {

    /**
     * Reviews one call.
     *
     * @return the decision, now (a completed stage) or later
     */
    CompletionStage<ApprovalDecision> review(ApprovalRequest request);

    /** An approver that allows everything (the same as configuring none). */
    static ExecutionApprover allowAll() {
        return ExecutionApprovers.allowAll();
    }

    /** An approver that decides synchronously (on the approval thread, within the approval timeout). */
    static ExecutionApprover of(Function<ApprovalRequest, ApprovalDecision> decide) {
        Objects.requireNonNull(decide, "decide");
        return request -> CompletableFuture.completedFuture(decide.apply(request));
    }
}
