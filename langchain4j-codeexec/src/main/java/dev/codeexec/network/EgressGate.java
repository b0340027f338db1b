package dev.codeexec.network;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One workspace's way out: a listening socket of the {@link EgressProxy}, the workspace's policy, what its approver
 * allowed for the workspace, and its limits' counters. Closing the gate ends its connections and removes its socket.
 */
public final class EgressGate implements AutoCloseable {

    private final EgressProxy proxy;
    private final String workspaceId;
    private final ServerSocketChannel server;
    private final Path socket;
    private final int port;
    private volatile EgressPolicy policy;
    private final Set<EgressConnection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    /** {@code host:port} the approver allowed for the workspace's life. */
    private final Set<String> approved = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    EgressGate(EgressProxy proxy, String workspaceId, EgressPolicy policy, ServerSocketChannel server, Path socket)
            throws IOException {
        this.proxy = proxy;
        this.workspaceId = Objects.requireNonNull(workspaceId, "workspaceId");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.server = server;
        this.socket = socket;
        this.port = server.getLocalAddress() instanceof InetSocketAddress a ? a.getPort() : -1;
    }

    void start() {
        proxy.threads.execute(this::acceptLoop);
    }

    private void acceptLoop() {
        Thread.currentThread().setName("codeexec-egress-accept-" + workspaceId);
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                pause(); // out of descriptors, say: try again a moment later, without spinning
                continue;
            }
            if (open.incrementAndGet() > proxy.limits.maxConnections()) {
                // Refused here, without a thread: a program cannot make the proxy hold more than its limit.
                open.decrementAndGet();
                EgressConnection.refuseOverLimit(proxy, client, proxy.limits.maxConnections());
                continue;
            }
            EgressConnection c = new EgressConnection(this, client);
            connections.add(c);
            if (closed) {
                c.end();
            }
            try {
                proxy.threads.execute(c);
            } catch (Throwable t) { // the proxy is closing, or no thread can be made: the connection ends
                c.end();
                ended(c);
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The workspace this gate belongs to. */
    public String workspaceId() {
        return workspaceId;
    }

    /** The Unix-domain socket programs connect to, for a gate opened with {@link EgressProxy#openUnix}. */
    public Optional<Path> socket() {
        return Optional.ofNullable(socket);
    }

    /** The loopback port programs connect to, for a gate opened with {@link EgressProxy#openLoopback}; else -1. */
    public int port() {
        return port;
    }

    /** The policy in force. */
    public EgressPolicy policy() {
        return policy;
    }

    /**
     * Narrows the policy for the rest of the gate's life (never widens it); connections open now are kept. What the
     * approver allowed for the workspace before is forgotten: it was allowed under the wider policy.
     */
    public void narrow(EgressPolicy narrower) {
        synchronized (this) {
            policy = policy.narrowedBy(narrower);
            approved.clear();
        }
    }

    /** Connections open now. */
    public int openConnections() {
        return connections.size();
    }

    /** Bytes carried both ways since the gate opened. */
    public long bytesCarried() {
        return bytes.get();
    }

    /** Ends every connection open now (a run ended); the gate keeps listening. */
    public void endConnections() {
        for (EgressConnection c : connections) {
            c.end();
        }
    }

    void endIdleConnections(Duration idle) {
        long now = System.nanoTime();
        for (EgressConnection c : connections) {
            if (c.expired(now, idle.toNanos())) {
                c.endIdle();
            }
        }
    }

    void ended(EgressConnection c) {
        if (connections.remove(c)) {
            open.decrementAndGet();
        }
    }

    /** Counts bytes against the workspace's budget; false once the budget is used up. */
    boolean consume(long n) {
        long total = bytes.addAndGet(n);
        return proxy.limits.maxBytes() == 0 || total <= proxy.limits.maxBytes();
    }

    boolean budgetUsedUp() {
        return proxy.limits.maxBytes() > 0 && bytes.get() >= proxy.limits.maxBytes();
    }

    EgressProxy proxy() {
        return proxy;
    }

    /** The verdict on a connection and the addresses to connect to. */
    record Verdict(EgressEvent.Outcome outcome, List<InetAddress> addresses, String rule, String reason) {
    }

    /**
     * Decides a connection: screens the host as asked (no lookup), asks the approver about hosts no rule covers,
     * then resolves names and checks the addresses it will connect to.
     */
    Verdict decide(EgressTarget target, EgressConnection connection) {
        EgressPolicy p = policy;
        EgressDecision screened = p.screen(target);
        if (screened.verdict() == EgressDecision.Verdict.DENIED) {
            return denied(screened);
        }
        boolean approval = false;
        if (screened.verdict() == EgressDecision.Verdict.UNKNOWN) {
            String key = target.authority();
            if (!approved.contains(key)) {
                EgressApproval answer = ask(new EgressRequest(workspaceId, target, screened.reason()), connection);
                if (answer == EgressApproval.ALLOW_FOR_WORKSPACE) {
                    approved.add(key);
                } else if (answer != EgressApproval.ALLOW_ONCE) {
                    return new Verdict(EgressEvent.Outcome.DENIED, List.of(), "-", screened.reason()
                            + (proxy.approver == null ? "" : " (and the approver did not allow it)"));
                }
            }
            approval = true;
        }
        List<InetAddress> addresses;
        if (target.isAddress()) {
            addresses = List.of(IpRange.addressOf(target.host()));
        } else {
            try {
                addresses = proxy.resolver.resolve(target.host());
            } catch (UnknownHostException | RuntimeException e) {
                return new Verdict(EgressEvent.Outcome.FAILED, List.of(), screened.ruleText(), "egress to " + target
                        + " failed: the host name cannot be resolved");
            }
        }
        EgressDecision decided = p.decide(target, addresses);
        if (decided.verdict() == EgressDecision.Verdict.DENIED) {
            return denied(decided);
        }
        if (approval) {
            return new Verdict(EgressEvent.Outcome.APPROVED, addresses, "-", "approved");
        }
        return new Verdict(EgressEvent.Outcome.ALLOWED, addresses, decided.ruleText(), decided.reason());
    }

    private static Verdict denied(EgressDecision d) {
        return new Verdict(EgressEvent.Outcome.DENIED, List.of(), d.ruleText(), d.reason());
    }

    private EgressApproval ask(EgressRequest request, EgressConnection connection) {
        EgressApprover approver = proxy.approver;
        if (approver == null) {
            return EgressApproval.DENY;
        }
        connection.awaitingApproval(true);
        CompletableFuture<EgressApproval> answer = null;
        try {
            answer = approver.review(request).toCompletableFuture();
            EgressApproval a = answer.get(proxy.approvalTimeout.toMillis(), TimeUnit.MILLISECONDS);
            return a == null ? EgressApproval.DENY : a;
        } catch (TimeoutException | ExecutionException | RuntimeException e) {
            if (answer != null) {
                answer.cancel(true);
            }
            return EgressApproval.DENY;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return EgressApproval.DENY;
        } finally {
            connection.awaitingApproval(false);
        }
    }

    /** Stops listening, ends every connection and removes the socket file. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        endConnections();
        if (socket != null) {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                // the directory goes with the workspace
            }
        }
        proxy.forget(this);
    }

    /** True once closed. */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "EgressGate[" + workspaceId + (socket != null ? ", " + socket : ", port " + port) + "]";
    }
}
