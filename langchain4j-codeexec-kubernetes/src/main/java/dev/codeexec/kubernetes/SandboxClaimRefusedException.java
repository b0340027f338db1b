package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;

/**
 * The agent-sandbox controller answered a {@code SandboxClaim} with {@code Ready=False} and a reason that will not
 * clear by waiting ({@code WarmPoolNotFound}, {@code TemplateNotFound}, {@code InvalidMetadata},
 * {@code ClaimExpired}, {@code SandboxExpired}, a finished pod, ...), or the claim was deleted while the engine waited.
 * An operator must act: create the warm pool or template, fix the claim's metadata policy, or raise the lifetime.
 * {@link #reason()} and {@link #detail()} are the controller's condition, verbatim; the claim has been released.
 */
public class SandboxClaimRefusedException extends BackendUnavailableException {

    private final String reason;
    private final String detail;

    SandboxClaimRefusedException(String claimName, String reason, String detail) {
        super("SandboxClaim " + claimName + " was refused by the agent-sandbox controller: " + reason
                + (detail == null || detail.isBlank() ? "" : " (" + detail + ")"));
        this.reason = reason;
        this.detail = detail;
    }

    /** The {@code Ready} condition's reason, for example {@code WarmPoolNotFound}. */
    public String reason() {
        return reason;
    }

    /** The {@code Ready} condition's message; may be null or empty. */
    public String detail() {
        return detail;
    }
}
