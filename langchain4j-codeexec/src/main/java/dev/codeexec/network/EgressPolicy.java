package dev.codeexec.network;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Which hosts programs may connect to. Immutable and thread-safe.
 *
 * <p><b>How a connection is decided.</b> First on the host as asked, before any lookup ({@link #screen}), so that
 * a name no rule allows is never resolved (a lookup of {@code secret.attacker.example} would already leak):
 * <ol>
 *   <li><b>Deny wins.</b> A deny rule matching the name, or the IP address asked for, refuses the connection,
 *       whatever allow rules say.</li>
 *   <li>A name is allowed by a name rule matching it; an IP address asked for directly only by an address rule
 *       containing it (name rules never match addresses).</li>
 *   <li><b>Nothing matched</b>: {@link EgressDecision.Verdict#UNKNOWN}. The engine's {@link EgressApprover} may
 *       allow it; without an approver it is refused. A policy built with {@link Builder#allowOthers()} (a deny-list
 *       policy) allows it instead.</li>
 * </ol>
 * Then, for a name allowed or approved, on the addresses the proxy resolved it to and will connect to
 * ({@link #decide}): a deny rule containing any of them refuses it, and <b>non-public addresses are refused</b>
 * (this host, private networks, link-local and cloud metadata, see {@link IpRange#NON_PUBLIC}) unless an allow rule
 * on addresses contains them. An allowed name that resolves to {@code 127.0.0.1} or {@code 169.254.169.254} is
 * refused: allowing a name does not allow its addresses.
 *
 * Rule order does not matter. Every rule also names ports and a protocol (see {@link EgressRule}).
 *
 * <p>A policy can be narrowed ({@link #narrowedBy}), never widened: the narrowed policy allows a connection only when
 * both allow it.
 */
public final class EgressPolicy {

    private static final EgressPolicy DENY_ALL = new EgressPolicy(List.of(), false, null);
    private static final EgressPolicy ALLOW_ALL = new EgressPolicy(List.of(), true, null);
    /** How many allowed destinations a refusal message lists. */
    private static final int LISTED = 8;

    private final List<EgressRule> rules;
    private final boolean allowOthers;
    private final EgressPolicy narrower;

    private EgressPolicy(List<EgressRule> rules, boolean allowOthers, EgressPolicy narrower) {
        this.rules = List.copyOf(rules);
        this.allowOthers = allowOthers;
        this.narrower = narrower;
    }

    /** No host at all (every connection refused unless an approver allows it). */
    public static EgressPolicy denyAll() {
        return DENY_ALL;
    }

    /**
     * Every public host on every port; non-public addresses stay refused. For a run that needs the internet but
     * not the host's networks or the cloud's metadata service.
     */
    public static EgressPolicy allowAll() {
        return ALLOW_ALL;
    }

    /** A policy of allow rules only, each in {@link EgressRule}'s syntax. */
    public static EgressPolicy allowing(String... allowRules) {
        Builder b = builder();
        for (String r : allowRules) {
            b.allow(r);
        }
        return b.build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The rules, in the order they were added. */
    public List<EgressRule> rules() {
        return rules;
    }

    /**
     * True for a policy made by {@link #narrowedBy}: its {@link #rules()} are only its own part, and a connection
     * must also pass the narrower's.
     */
    public boolean isNarrowed() {
        return narrower != null;
    }

    /** True when connections no rule covers are allowed (a deny-list policy). */
    public boolean allowsOthers() {
        return allowOthers;
    }

    /**
     * This policy narrowed by {@code other}: a connection is allowed only when both allow it, and refused when
     * {@code other} does not allow it (an approver is asked only about what this policy does not cover and
     * {@code other} allows).
     */
    public EgressPolicy narrowedBy(EgressPolicy other) {
        Objects.requireNonNull(other, "other");
        if (narrower == null) {
            return new EgressPolicy(rules, allowOthers, other);
        }
        return new EgressPolicy(rules, allowOthers, narrower.narrowedBy(other));
    }

    /**
     * Decides a connection on the host as asked, before any lookup: denied by a rule, allowed by a rule (names still
     * to be checked by {@link #decide} once resolved), or not covered.
     */
    public EgressDecision screen(EgressTarget target) {
        return combine(screenOwn(target), narrower == null ? null : narrower.screen(target));
    }

    /**
     * Decides a connection to {@code target} whose host resolved to {@code addresses} (for an IP literal, the
     * literal itself): {@link #screen} and then the checks of the addresses. Never looks anything up.
     */
    public EgressDecision decide(EgressTarget target, List<InetAddress> addresses) {
        return combine(decideOwn(target, addresses), narrower == null ? null : narrower.decide(target, addresses));
    }

    /**
     * Narrowed: what the narrower does not allow is refused (no approver widens a narrowed policy); otherwise this
     * policy decides.
     */
    private static EgressDecision combine(EgressDecision own, EgressDecision other) {
        if (other == null || own.verdict() == EgressDecision.Verdict.DENIED
                || other.verdict() == EgressDecision.Verdict.ALLOWED) {
            return own;
        }
        if (other.verdict() == EgressDecision.Verdict.DENIED) {
            return other;
        }
        return EgressDecision.denied(null, other.reason().replace("is not allowed by the policy",
                "is not allowed by the narrowed policy"));
    }

    private EgressDecision screenOwn(EgressTarget target) {
        List<InetAddress> literal = target.isAddress() ? List.of(IpRange.addressOf(target.host())) : List.of();
        for (EgressRule r : rules) {
            if (r.action() == EgressRule.Action.DENY && (r.matchesName(target)
                    || (!literal.isEmpty() && r.matchesAddress(target, literal.get(0))))) {
                return EgressDecision.denied(r, "egress to " + target + " is denied by the rule '" + r + "'");
            }
        }
        for (EgressRule r : rules) {
            if (r.action() == EgressRule.Action.ALLOW && (r.matchesName(target)
                    || (!literal.isEmpty() && r.matchesAddress(target, literal.get(0))))) {
                return EgressDecision.allowed(r, "allowed by the rule '" + r + "'");
            }
        }
        if (!literal.isEmpty() && IpRange.isNonPublic(literal.get(0))) {
            return EgressDecision.denied(null, "egress to " + target + " is not allowed: it is the non-public "
                    + "address " + IpRange.canonical(literal.get(0)).getHostAddress() + ", which only a rule naming "
                    + "that address or its range allows");
        }
        if (allowOthers) {
            return EgressDecision.allowed(null, "allowed: no rule denies it");
        }
        for (EgressRule r : rules) {
            // A host the policy names, asked for on another port or kind: refused, not a question for an approver.
            if (r.action() == EgressRule.Action.ALLOW && r.matchesHost(target)) {
                return EgressDecision.denied(null, "egress to " + target + " is not allowed: the policy allows "
                        + target.host() + " only as '" + r.destination() + "'");
            }
        }
        return EgressDecision.unknown(refusal(target));
    }

    private EgressDecision decideOwn(EgressTarget target, List<InetAddress> addresses) {
        EgressDecision screened = screenOwn(target);
        if (screened.verdict() == EgressDecision.Verdict.DENIED) {
            return screened;
        }
        for (EgressRule r : rules) {
            for (InetAddress a : addresses) {
                if (r.action() == EgressRule.Action.DENY && r.matchesAddress(target, a)) {
                    return EgressDecision.denied(r, "egress to " + target + " is denied by the rule '" + r
                            + "' (it resolves to " + IpRange.canonical(a).getHostAddress() + ")");
                }
            }
        }
        for (InetAddress a : addresses) {
            if (IpRange.isNonPublic(a) && allowingAddress(target, a) == null) {
                return EgressDecision.denied(null, "egress to " + target + " is not allowed: "
                        + (target.isAddress() ? "it is" : "it resolves to") + " the non-public address "
                        + IpRange.canonical(a).getHostAddress() + ", which only a rule naming that address or "
                        + "its range allows");
            }
        }
        return screened;
    }

    private EgressRule allowingAddress(EgressTarget target, InetAddress a) {
        for (EgressRule r : rules) {
            if (r.action() == EgressRule.Action.ALLOW && r.matchesAddress(target, a)) {
                return r;
            }
        }
        return null;
    }

    /** The message for a connection no rule allows, listing what is allowed. */
    String refusal(EgressTarget target) {
        List<String> allowed = new ArrayList<>();
        for (EgressRule r : rules) {
            if (r.action() == EgressRule.Action.ALLOW) {
                allowed.add(r.destination());
            }
        }
        String list = allowed.isEmpty() ? "no host is allowed"
                : "allowed: " + allowed.stream().limit(LISTED).collect(Collectors.joining(", "))
                        + (allowed.size() > LISTED ? " and " + (allowed.size() - LISTED) + " more" : "");
        return "egress to " + target + " is not allowed by the policy; " + list;
    }

    @Override
    public String toString() {
        String own = rules.isEmpty() ? (allowOthers ? "allow all public hosts" : "deny all")
                : rules.stream().map(EgressRule::toString).collect(Collectors.joining(", "))
                        + (allowOthers ? ", allow others" : "");
        return narrower == null ? own : own + " narrowed by (" + narrower + ")";
    }

    /** Builds an {@link EgressPolicy}. */
    public static final class Builder {
        private final List<EgressRule> rules = new ArrayList<>();
        private boolean allowOthers;

        /** Adds an allow rule (see {@link EgressRule} for the syntax). */
        public Builder allow(String rule) {
            return rule(EgressRule.allow(rule));
        }

        /** Adds a deny rule (see {@link EgressRule} for the syntax). */
        public Builder deny(String rule) {
            return rule(EgressRule.deny(rule));
        }

        /** Adds a rule. */
        public Builder rule(EgressRule rule) {
            rules.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /** Adds rules. */
        public Builder rules(List<EgressRule> more) {
            more.forEach(this::rule);
            return this;
        }

        /**
         * Allows connections no rule covers (a deny-list policy): every public host except those denied.
         * Non-public addresses stay refused unless allowed by address.
         */
        public Builder allowOthers() {
            this.allowOthers = true;
            return this;
        }

        public EgressPolicy build() {
            return new EgressPolicy(rules, allowOthers, null);
        }
    }
}
