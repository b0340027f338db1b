package dev.codeexec.governance;

import dev.codeexec.policy.CommandPolicy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Ready-made {@link ExecutionApprover}s, and a way to combine them. */
public final class ExecutionApprovers {

    private static final CompletionStage<ApprovalDecision> ALLOWED =
            CompletableFuture.completedFuture(ApprovalDecision.allow());

    private static final ExecutionApprover ALLOW_ALL = request -> ALLOWED;

    private ExecutionApprovers() {
    }

    /** Allows everything. */
    public static ExecutionApprover allowAll() {
        return ALLOW_ALL;
    }

    /**
     * Denies every run (commands and code) on an engine whose programs can reach a network
     * ({@code Capabilities.networkAllowed()}: the local engine, a container or sandbox with network access); allows
     * runs on engines without one, and every file write and artifact action.
     */
    public static ExecutionApprover denyNetworkEnabledRuns() {
        return request -> CompletableFuture.completedFuture(request.action().isRun()
                && request.capabilities().networkAllowed()
                ? ApprovalDecision.deny("programs may only run where they have no network access, and the '"
                        + request.engine().name() + "' engine gives them one")
                : ApprovalDecision.allow());
    }

    /**
     * Allows commands made only of allowed commands, and asks {@code delegate} (a human, say) about every other run:
     * a command with a name outside the list, one the list's policy refuses (shell syntax beyond words, quotes and
     * {@code | && || ;}, a wrapper such as {@code env}), and every code snippet (no list covers code). File writes and
     * artifact actions are allowed without asking.
     *
     * <p>The list is checked as a {@link CommandPolicy#allowing(String...)} policy checks it: exact names
     * ({@code ls} allows {@code ls}, never {@code /tmp/ls}), the built-in deny list and the argument validators
     * included. This approver narrows what needs a human; the engine still bounds what runs.
     *
     * @param allowedCommands the command names that need no approval, for example {@code ls}, {@code cat}
     */
    public static ExecutionApprover askOutsideAllowList(Collection<String> allowedCommands,
                                                        ExecutionApprover delegate) {
        Objects.requireNonNull(delegate, "delegate");
        if (allowedCommands == null || allowedCommands.isEmpty()) {
            throw new IllegalArgumentException("allowedCommands: give at least one command; with none, use the "
                    + "delegate itself");
        }
        CommandPolicy allowList = CommandPolicy.allowing(allowedCommands.toArray(String[]::new));
        return request -> {
            if (request.action() == ExecutionAction.RUN_COMMAND) {
                String line = request.commandLine().orElse("");
                return isAllowed(allowList, line) ? ALLOWED : delegate.review(request);
            }
            return request.action() == ExecutionAction.EXECUTE_CODE ? delegate.review(request) : ALLOWED;
        };
    }

    private static boolean isAllowed(CommandPolicy allowList, String line) {
        try {
            allowList.check(line);
            return true;
        } catch (RuntimeException notOnTheList) {
            return false;
        }
    }

    /**
     * All of these approvers, asked in order: the first denial wins (later ones are not asked); when all allow, the
     * tightest changes of all apply (the shortest time limit).
     */
    public static ExecutionApprover allOf(ExecutionApprover... approvers) {
        List<ExecutionApprover> list = new ArrayList<>();
        for (ExecutionApprover a : approvers) {
            list.add(Objects.requireNonNull(a, "approver"));
        }
        if (list.isEmpty()) {
            throw new IllegalArgumentException("allOf: give at least one approver");
        }
        List<ExecutionApprover> chain = List.copyOf(list);
        return request -> next(chain, 0, request, null);
    }

    private static CompletionStage<ApprovalDecision> next(List<ExecutionApprover> chain, int i,
                                                          ApprovalRequest request, RunChanges changes) {
        if (i == chain.size()) {
            return CompletableFuture.completedFuture(changes == null ? ApprovalDecision.allow()
                    : ApprovalDecision.allowWith(changes));
        }
        CompletionStage<ApprovalDecision> stage = chain.get(i).review(request);
        if (stage == null) {
            throw new IllegalStateException("approver " + (i + 1) + " of " + chain.size() + " answered null");
        }
        return stage.thenCompose(d -> {
            if (d == null) {
                throw new IllegalStateException("approver " + (i + 1) + " of " + chain.size() + " decided null");
            }
            if (!d.isAllowed()) {
                return CompletableFuture.completedFuture(d);
            }
            RunChanges merged = d.changes().map(c -> c.tightest(changes)).orElse(changes);
            return next(chain, i + 1, request, merged);
        });
    }
}
