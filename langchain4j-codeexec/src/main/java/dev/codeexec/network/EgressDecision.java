package dev.codeexec.network;

import java.util.Objects;
import java.util.Optional;

/**
 * What an {@link EgressPolicy} says about one connection.
 *
 * @param verdict allowed, denied, or not covered by any rule
 * @param rule    the rule that decided, when one did
 * @param reason  why, in words a model can act on
 */
public record EgressDecision(Verdict verdict, Optional<EgressRule> rule, String reason) {

    /** The three outcomes of a policy. */
    public enum Verdict {
        /** A rule allows the connection. */
        ALLOWED,
        /** A rule, or the protection of non-public addresses, refuses it. */
        DENIED,
        /** No rule covers it: an approver may decide; without one it is refused. */
        UNKNOWN
    }

    public EgressDecision {
        Objects.requireNonNull(verdict, "verdict");
        rule = rule == null ? Optional.empty() : rule;
        Objects.requireNonNull(reason, "reason");
    }

    static EgressDecision allowed(EgressRule rule, String reason) {
        return new EgressDecision(Verdict.ALLOWED, Optional.ofNullable(rule), reason);
    }

    static EgressDecision denied(EgressRule rule, String reason) {
        return new EgressDecision(Verdict.DENIED, Optional.ofNullable(rule), reason);
    }

    static EgressDecision unknown(String reason) {
        return new EgressDecision(Verdict.UNKNOWN, Optional.empty(), reason);
    }

    /** The rule's text, or {@code "-"} when no rule decided. */
    public String ruleText() {
        return rule.map(EgressRule::toString).orElse("-");
    }
}
