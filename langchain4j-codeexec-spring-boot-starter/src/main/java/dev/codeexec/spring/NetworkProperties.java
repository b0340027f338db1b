package dev.codeexec.spring;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.convert.DurationUnit;

/**
 * Egress: which hosts the model's programs may connect to. Setting an allow or deny rule, or allow-others, holds
 * programs to that policy: the sandbox and container backends route them through an egress proxy of the engine's
 * own, the e2b backend hands the rules to E2B's firewall, and the local and jupyter backends refuse to start (they
 * cannot enforce it). An EgressApprover bean decides hosts no rule covers; EgressListener beans hear every
 * connection.
 */
public class NetworkProperties {

    /**
     * Destinations programs may connect to: host, *.suffix, IP or CIDR, optionally with http://, https:// or
     * tcp:// and :port, :from-to or :* (no port: 80 and 443). Non-public addresses (127.0.0.0/8, private
     * networks, cloud metadata) only when a rule names the address or its range.
     */
    private List<String> allow = new ArrayList<>();

    /** Destinations programs may not connect to, whatever allow says (same syntax). */
    private List<String> deny = new ArrayList<>();

    /**
     * Whether destinations no rule covers are allowed (a deny-list policy: every public host but the denied).
     * Default false: they are refused unless an EgressApprover bean allows them.
     */
    private boolean allowOthers;

    /** Most connections a workspace may have open at once through the proxy (default 32). */
    private Integer maxConnections;

    /** Most bytes, both directions, a workspace may move through the proxy over its life (default 0: no limit). */
    private Long maxBytes;

    /** A proxied connection with no bytes either way for this long is ended (default 5m). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration idleTimeout;

    /** How long the proxy tries to reach a host (default 10s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration connectTimeout;

    /** How long a connection waits for the EgressApprover bean before it is refused (default 2m). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration approvalTimeout;

    /** True when a rule or allow-others is set: an egress policy is configured. */
    boolean hasPolicy() {
        return !allow.isEmpty() || !deny.isEmpty() || allowOthers;
    }

    public List<String> getAllow() {
        return allow;
    }

    public void setAllow(List<String> allow) {
        this.allow = allow;
    }

    public List<String> getDeny() {
        return deny;
    }

    public void setDeny(List<String> deny) {
        this.deny = deny;
    }

    public boolean isAllowOthers() {
        return allowOthers;
    }

    public void setAllowOthers(boolean allowOthers) {
        this.allowOthers = allowOthers;
    }

    public Integer getMaxConnections() {
        return maxConnections;
    }

    public void setMaxConnections(Integer maxConnections) {
        this.maxConnections = maxConnections;
    }

    public Long getMaxBytes() {
        return maxBytes;
    }

    public void setMaxBytes(Long maxBytes) {
        this.maxBytes = maxBytes;
    }

    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = idleTimeout;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public Duration getApprovalTimeout() {
        return approvalTimeout;
    }

    public void setApprovalTimeout(Duration approvalTimeout) {
        this.approvalTimeout = approvalTimeout;
    }
}
