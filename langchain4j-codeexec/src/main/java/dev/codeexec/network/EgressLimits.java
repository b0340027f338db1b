package dev.codeexec.network;

import dev.codeexec.engine.InvalidSpecException;
import java.time.Duration;
import java.util.Objects;

/**
 * What one workspace may use of the proxy. When a limit is reached the proxy refuses new connections (connections)
 * or ends them (bytes, idle time), and reports {@link EgressEvent.Outcome#LIMITED}.
 *
 * @param maxConnections most connections open at once
 * @param maxBytes       most bytes, both directions, over the workspace's life; 0 for no limit
 * @param idleTimeout    a connection with no bytes either way for this long is ended
 * @param connectTimeout how long the proxy tries to reach a host
 */
public record EgressLimits(int maxConnections, long maxBytes, Duration idleTimeout, Duration connectTimeout) {

    /** 32 connections, no byte limit, 5 minutes idle, 10 seconds to connect. */
    public static final EgressLimits DEFAULT = new EgressLimits(32, 0, Duration.ofMinutes(5), Duration.ofSeconds(10));

    public EgressLimits {
        if (maxConnections < 1) {
            throw new InvalidSpecException("maxConnections (" + maxConnections + ") must be at least 1");
        }
        if (maxBytes < 0) {
            throw new InvalidSpecException("maxBytes (" + maxBytes + ") must not be negative");
        }
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (idleTimeout.isNegative() || idleTimeout.isZero() || connectTimeout.isNegative()
                || connectTimeout.isZero()) {
            throw new InvalidSpecException("the idle and connect timeouts must be positive");
        }
    }

    public EgressLimits withMaxConnections(int v) {
        return new EgressLimits(v, maxBytes, idleTimeout, connectTimeout);
    }

    public EgressLimits withMaxBytes(long v) {
        return new EgressLimits(maxConnections, v, idleTimeout, connectTimeout);
    }

    public EgressLimits withIdleTimeout(Duration v) {
        return new EgressLimits(maxConnections, maxBytes, v, connectTimeout);
    }

    public EgressLimits withConnectTimeout(Duration v) {
        return new EgressLimits(maxConnections, maxBytes, idleTimeout, v);
    }
}
