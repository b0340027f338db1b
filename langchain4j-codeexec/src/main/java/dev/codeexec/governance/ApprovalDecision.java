package dev.codeexec.governance;

import java.util.Objects;
import java.util.Optional;

/**
 * An {@link ExecutionApprover}'s answer: {@linkplain #allow() allow}, {@linkplain #deny(String) deny} with a reason the
 * model reads, or {@linkplain #allowWith(RunChanges) allow with changes} that tighten the run.
 *
 * <p>Immutable.
 */
public final class ApprovalDecision {

    private static final ApprovalDecision ALLOW = new ApprovalDecision(true, null, null);

    private final boolean allowed;
    private final String reason;
    private final RunChanges changes;

    private ApprovalDecision(boolean allowed, String reason, RunChanges changes) {
        this.allowed = allowed;
        this.reason = reason;
        this.changes = changes;
    }

    /** Run it as asked. */
    public static ApprovalDecision allow() {
        return ALLOW;
    }

    /**
     * Run it with these changes (a shorter time limit, for example). Changes that would loosen a limit get the call
     * refused instead (see {@link RunChanges}).
     */
    public static ApprovalDecision allowWith(RunChanges changes) {
        return new ApprovalDecision(true, null, Objects.requireNonNull(changes, "changes"));
    }

    /**
     * Do not run it. The model reads the reason in the tool result ({@code error: not approved: <reason>. ...}), so
     * write it for the model, and keep secrets and host details out of it.
     *
     * @param reason why, for example {@code "network access is not approved for this conversation"}
     */
    public static ApprovalDecision deny(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("a denial needs a reason the model can act on");
        }
        return new ApprovalDecision(false, reason.strip(), null);
    }

    /** True for {@link #allow()} and {@link #allowWith(RunChanges)}. */
    public boolean isAllowed() {
        return allowed;
    }

    /** The reason of a denial; empty when allowed. */
    public Optional<String> reason() {
        return Optional.ofNullable(reason);
    }

    /** The changes of {@link #allowWith(RunChanges)}; empty otherwise. */
    public Optional<RunChanges> changes() {
        return Optional.ofNullable(changes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ApprovalDecision d && allowed == d.allowed && Objects.equals(reason, d.reason)
                && Objects.equals(changes, d.changes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(allowed, reason, changes);
    }

    @Override
    public String toString() {
        return allowed ? (changes == null ? "allow" : "allow with " + changes) : "deny: " + reason;
    }
}
