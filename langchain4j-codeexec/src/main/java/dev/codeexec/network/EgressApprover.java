package dev.codeexec.network;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Decides connections to hosts no rule of the policy covers, the way an assistant asks before it reaches a new
 * domain. Only {@link EgressDecision.Verdict#UNKNOWN} connections reach it: a denied host, a non-public address or
 * a port the rules do not name is never asked about.
 *
 * <p>The connection waits for the answer, at most the proxy's approval timeout, while the rest of the run goes on;
 * no answer in time, an exceptional or cancelled stage, a {@code null} answer or an approver that throws all deny.
 * Called on the proxy's connection threads for many workspaces at once: implementations must be thread-safe.
 */
@FunctionalInterface
public interface EgressApprover {

    /** Reviews one connection; the answer may come later. */
    CompletionStage<EgressApproval> review(EgressRequest request);

    /** An approver that decides synchronously. */
    static EgressApprover of(Function<EgressRequest, EgressApproval> decide) {
        return request -> CompletableFuture.completedFuture(decide.apply(request));
    }
}
