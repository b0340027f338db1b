package dev.codeexec.network;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress proxy an engine owns: one {@link EgressGate} per workspace, each on a socket of its own that is the
 * workspace's only way out. A gate speaks HTTP proxy ({@code CONNECT} for TLS and other TCP, absolute-form requests
 * for plain HTTP) and SOCKS5 on the same socket; it resolves names itself, decides every connection with its
 * workspace's {@link EgressPolicy} on the addresses it will really connect to, compares a tunnel's TLS server name
 * with the host asked for, asks the {@link EgressApprover} about hosts no rule covers, enforces the workspace's
 * {@link EgressLimits} and reports every connection to the {@link EgressListener}s.
 *
 * <p><b>Threads.</b> Each gate has an accepting thread; each connection has one thread that reads the request,
 * decides, connects and carries the program's bytes to the host, and one that carries the host's bytes back
 * ({@code codeexec-egress-N}, daemons). One watchdog thread ends idle connections. No lock is held while waiting for
 * the network or an approver: a slow host or approver holds up its own connection only.
 *
 * <p>Closing the proxy closes every gate and ends every connection.
 */
public final class EgressProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EgressProxy.class);

    final HostResolver resolver;
    final EgressApprover approver;
    final Duration approvalTimeout;
    final EgressLimits limits;
    private final List<EgressListener> listeners;
    final ExecutorService threads;
    final ScheduledExecutorService watchdog;
    private final Set<EgressGate> gates = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private EgressProxy(Builder b) {
        this.resolver = b.resolver;
        this.approver = b.approver;
        this.approvalTimeout = b.approvalTimeout;
        this.limits = b.limits;
        this.listeners = new java.util.concurrent.CopyOnWriteArrayList<>(b.listeners);
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "codeexec-egress-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.threads = Executors.newCachedThreadPool(factory);
        this.watchdog = Executors.newSingleThreadScheduledExecutor(factory);
        long period = Math.max(50, Math.min(1000, limits.idleTimeout().toMillis() / 4));
        watchdog.scheduleWithFixedDelay(this::endIdleConnections, period, period, TimeUnit.MILLISECONDS);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Opens a gate for a workspace on a new Unix-domain socket at {@code socket} (its directory must exist; a stale
     * socket file there is replaced). The caller decides who may connect to it (the file's owner and mode).
     *
     * @throws IOException when the socket cannot be bound
     */
    public EgressGate openUnix(String workspaceId, EgressPolicy policy, Path socket) throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(socket), 64);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        return register(new EgressGate(this, workspaceId, policy, server, socket));
    }

    /**
     * Opens a gate for a workspace on a new TCP port of this host's loopback interface, for programs that reach the
     * host's loopback (and for measuring the proxy). Anyone on this host can connect to it: prefer
     * {@link #openUnix} where programs are sandboxed.
     */
    public EgressGate openLoopback(String workspaceId, EgressPolicy policy) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.INET);
        try {
            server.bind(new InetSocketAddress("127.0.0.1", 0), 64);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        return register(new EgressGate(this, workspaceId, policy, server, null));
    }

    private EgressGate register(EgressGate gate) {
        if (closed) {
            gate.close();
            throw new IllegalStateException("the egress proxy is closed");
        }
        gates.add(gate);
        gate.start();
        return gate;
    }

    void forget(EgressGate gate) {
        gates.remove(gate);
    }

    /** Adds a listener for connection events from now on (for example the tools' audit, when they start). */
    public void addListener(EgressListener listener) {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /** The per-workspace limits every gate of this proxy enforces. */
    public EgressLimits limits() {
        return limits;
    }

    /** The gates open now. */
    public List<EgressGate> gates() {
        return new ArrayList<>(gates);
    }

    void report(EgressEvent event) {
        if (event.outcome() == EgressEvent.Outcome.DENIED || event.outcome() == EgressEvent.Outcome.LIMITED) {
            LOG.info("egress {} {} for workspace {}: {}", event.outcome(), event.target(), event.workspaceId(),
                    event.reason());
        } else {
            LOG.debug("egress {} {} for workspace {} ({} up, {} down)", event.outcome(), event.target(),
                    event.workspaceId(), event.bytesUp(), event.bytesDown());
        }
        for (EgressListener l : listeners) {
            try {
                l.onEgress(event);
            } catch (RuntimeException e) {
                LOG.warn("egress listener {} failed: {}", l.getClass().getName(), e.toString());
            }
        }
    }

    private void endIdleConnections() {
        for (EgressGate g : gates) {
            g.endIdleConnections(limits.idleTimeout());
        }
    }

    /** Closes every gate, ends every connection and stops the proxy's threads. */
    @Override
    public void close() {
        closed = true;
        for (EgressGate g : gates()) {
            g.close();
        }
        watchdog.shutdownNow();
        threads.shutdownNow();
    }

    /** Builds an {@link EgressProxy}. */
    public static final class Builder {
        private HostResolver resolver = HostResolver.system();
        private EgressApprover approver;
        private Duration approvalTimeout = Duration.ofMinutes(2);
        private EgressLimits limits = EgressLimits.DEFAULT;
        private final List<EgressListener> listeners = new ArrayList<>();

        /** Resolves host names; default {@link HostResolver#system()}. */
        public Builder resolver(HostResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /** Asked about hosts no rule covers; default none (they are refused). */
        public Builder approver(EgressApprover approver) {
            this.approver = approver;
            return this;
        }

        /** How long a connection waits for the approver before it is refused; default 2 minutes. */
        public Builder approvalTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("the approval timeout must be positive");
            }
            this.approvalTimeout = timeout;
            return this;
        }

        /** What each workspace may use; default {@link EgressLimits#DEFAULT}. */
        public Builder limits(EgressLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** Adds a listener for connection events. */
        public Builder listener(EgressListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public EgressProxy build() {
            return new EgressProxy(this);
        }
    }
}
