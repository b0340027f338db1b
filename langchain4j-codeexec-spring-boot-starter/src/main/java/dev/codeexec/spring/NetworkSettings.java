package dev.codeexec.spring;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.network.EgressApprover;
import dev.codeexec.network.EgressLimits;
import dev.codeexec.network.EgressListener;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The egress policy and proxy of {@code codeexec.network.*}, with the context's {@link EgressApprover} and
 * {@link EgressListener} beans. Every invalid value fails the start-up naming its property.
 *
 * @param policy the policy, or null when no rule (and no allow-others) is set
 * @param proxy  the proxy's settings for the sandbox and container backends; null without a policy
 */
record NetworkSettings(EgressPolicy policy, EgressProxy.Builder proxy) {

    static final String PREFIX = "codeexec.network.";

    /** No egress policy: programs get the network their backend gives them. */
    static final NetworkSettings NONE = new NetworkSettings(null, null);

    boolean hasPolicy() {
        return policy != null;
    }

    /**
     * @throws InvalidConfigurationPropertyValueException for an invalid rule or limit, or for proxy settings without
     *                                                    a policy (they would do nothing, so they are refused)
     */
    static NetworkSettings of(NetworkProperties n, EgressApprover approver, List<EgressListener> listeners) {
        if (!n.hasPolicy()) {
            requireUnset(n);
            return NONE;
        }
        EgressPolicy.Builder b = EgressPolicy.builder();
        rules(n.getAllow(), "allow", b::allow);
        rules(n.getDeny(), "deny", b::deny);
        if (n.isAllowOthers()) {
            b.allowOthers();
        }
        EgressProxy.Builder proxy = EgressProxy.builder().limits(limits(n)).approver(approver);
        if (n.getApprovalTimeout() != null) {
            positive("approval-timeout", n.getApprovalTimeout());
            proxy.approvalTimeout(n.getApprovalTimeout());
        }
        listeners.forEach(proxy::listener);
        return new NetworkSettings(b.build(), proxy);
    }

    /** True when one of the proxy's own settings (limits, approval timeout) is set. */
    static boolean proxySettingsSet(NetworkProperties n) {
        return n.getMaxConnections() != null || n.getMaxBytes() != null || n.getIdleTimeout() != null
                || n.getConnectTimeout() != null || n.getApprovalTimeout() != null;
    }

    private static void requireUnset(NetworkProperties n) {
        if (!proxySettingsSet(n)) {
            return;
        }
        String name = n.getMaxConnections() != null ? "max-connections" : n.getMaxBytes() != null ? "max-bytes"
                : n.getIdleTimeout() != null ? "idle-timeout" : n.getConnectTimeout() != null ? "connect-timeout"
                : "approval-timeout";
        Object value = switch (name) {
            case "max-connections" -> n.getMaxConnections();
            case "max-bytes" -> n.getMaxBytes();
            case "idle-timeout" -> n.getIdleTimeout();
            case "connect-timeout" -> n.getConnectTimeout();
            default -> n.getApprovalTimeout();
        };
        throw new InvalidConfigurationPropertyValueException(PREFIX + name, value, "it configures the egress proxy, "
                + "which runs only with an egress policy: set codeexec.network.allow, codeexec.network.deny or "
                + "codeexec.network.allow-others (without one, programs get their backend's network, unlimited)");
    }

    private interface RuleSink {
        void add(String rule);
    }

    private static void rules(List<String> rules, String kind, RuleSink sink) {
        for (int i = 0; i < rules.size(); i++) {
            String rule = rules.get(i);
            try {
                sink.add(rule == null ? "" : rule.strip());
            } catch (InvalidSpecException | IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + kind + "[" + i + "]", rule,
                        e.getMessage());
            }
        }
    }

    private static EgressLimits limits(NetworkProperties n) {
        EgressLimits l = EgressLimits.DEFAULT;
        if (n.getMaxConnections() != null) {
            if (n.getMaxConnections() < 1) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + "max-connections",
                        n.getMaxConnections(), "must be at least 1");
            }
            l = l.withMaxConnections(n.getMaxConnections());
        }
        if (n.getMaxBytes() != null) {
            if (n.getMaxBytes() < 0) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + "max-bytes", n.getMaxBytes(),
                        "must not be negative (0 for no limit)");
            }
            l = l.withMaxBytes(n.getMaxBytes());
        }
        if (n.getIdleTimeout() != null) {
            positive("idle-timeout", n.getIdleTimeout());
            l = l.withIdleTimeout(n.getIdleTimeout());
        }
        if (n.getConnectTimeout() != null) {
            positive("connect-timeout", n.getConnectTimeout());
            l = l.withConnectTimeout(n.getConnectTimeout());
        }
        return l;
    }

    private static void positive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + name, d, "must be positive");
        }
    }
}
