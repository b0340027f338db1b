package dev.codeexec.network;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection a program opened to its gate: reads the request, has the gate decide, connects to a checked
 * address, and carries bytes both ways until either side is done, a limit is reached or the gate ends it. Reports one
 * {@link EgressEvent} when it ends.
 *
 * <p>The connection's own thread reads the request and carries the program's bytes; a second pool thread carries the
 * host's from the moment the connection is made. The program's first bytes in a tunnel are held back until they show
 * whether they are a TLS ClientHello, whose server name must be the tunnel's host. Either thread, or the gate, may end the connection; the last of the two carrying
 * threads to finish reports it.
 */
final class EgressConnection implements Runnable {

    private static final int BUFFER = 64 * 1024;
    /** How long the program's socket stays open for reading after a plain HTTP response was sent whole. */
    static final long LINGER_MILLIS = 2000;

    /** How long a program has to send its request. */
    static final long REQUEST_TIMEOUT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    private final EgressGate gate;
    private final SocketChannel client;
    private final Instant started = Instant.now();
    private final long startedNanos = System.nanoTime();
    private volatile SocketChannel upstream;
    private volatile long lastActivity = System.nanoTime();
    private volatile boolean awaitingApproval;
    private final AtomicLong up = new AtomicLong();
    private final AtomicLong down = new AtomicLong();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final AtomicBoolean reported = new AtomicBoolean();
    /** True once a whole plain HTTP response was sent and the program's socket closes a moment later. */
    private volatile boolean lingering;
    /** Carrying threads still running: the last to finish reports. */
    private final AtomicInteger carriers = new AtomicInteger(1);
    private volatile EgressTarget target;
    private volatile EgressEvent.Outcome outcome = EgressEvent.Outcome.FAILED;
    private volatile String rule = "-";
    private volatile String reason = "";
    private volatile String address = "";

    EgressConnection(EgressGate gate, SocketChannel client) {
        this.gate = gate;
        this.client = client;
    }

    /**
     * Refuses a connection over the workspace's limit on the accepting thread, without reading it: an HTTP client
     * reads a 429 that says why, any other sees the connection end. Its socket closes a moment later.
     */
    static void refuseOverLimit(EgressProxy proxy, SocketChannel client, int limit) {
        try {
            client.configureBlocking(false); // never wait on a program that does not read
            client.write(java.nio.ByteBuffer.wrap(ProxyRequest.refusal(EgressTarget.Kind.HTTP, 429, 0,
                    "egress refused: the workspace already has " + limit + " connections open")));
            client.shutdownOutput();
            proxy.watchdog.schedule(() -> closeQuietly(client), LINGER_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IOException | RuntimeException e) {
            closeQuietly(client);
        }
    }

    @Override
    public void run() {
        try {
            ProxyRequest request;
            try {
                request = ProxyRequest.read(client);
            } catch (ProxyRequest.Malformed m) {
                reason = m.getMessage();
                refuse(m.kind, 400, m.socksCode);
                return;
            }
            target = request.target();
            EgressTarget.Kind kind = target.kind();
            if (gate.budgetUsedUp()) {
                limited(kind, "egress to " + target + " refused: the workspace used its egress budget of "
                        + gate.proxy().limits.maxBytes() + " bytes");
                return;
            }
            EgressGate.Verdict verdict = gate.decide(target, this);
            rule = verdict.rule();
            reason = verdict.reason();
            if (!verdict.outcome().connected()) {
                outcome = verdict.outcome();
                if (verdict.outcome() == EgressEvent.Outcome.DENIED) {
                    refuse(kind, 403, ProxyRequest.SOCKS_NOT_ALLOWED);
                } else {
                    refuse(kind, 502, ProxyRequest.SOCKS_HOST_UNREACHABLE);
                }
                return;
            }
            if (!connect(verdict)) {
                outcome = EgressEvent.Outcome.FAILED;
                reason = "egress to " + target + " failed: the host did not accept the connection";
                refuse(kind, 502, ProxyRequest.SOCKS_HOST_UNREACHABLE);
                return;
            }
            outcome = verdict.outcome();
            ProxyRequest.write(client, ProxyRequest.established(kind));
            // The host's bytes flow at once: a host that speaks first (a banner, a greeting) is not held up by the
            // check of the program's first bytes below.
            boolean headRequest = request.headRequest();
            carriers.incrementAndGet();
            try {
                gate.proxy().threads.execute(kind.tunnel() ? this::carryDown : () -> carryResponse(headRequest));
            } catch (Throwable t) { // no thread: the connection ends
                carriers.decrementAndGet();
                end();
                return;
            }
            ByteBuffer first = request.upstream();
            if (kind.tunnel()) {
                first = screenTls(first);
                if (first == null) {
                    return;
                }
            }
            if (!send(first, upstream, up)) {
                return;
            }
            if (kind.tunnel()) {
                carry(client, upstream, up);
            } else {
                // One request: its body, and not a byte more (a second request would skip the decision).
                HttpFraming.body(new HttpFraming.Source(client, request.body(), this::active),
                        b -> send(b, upstream, up), request.bodyLength());
            }
        } catch (IOException | RuntimeException e) {
            // the program or the host went away, or the gate ended the connection
        } finally {
            finish();
        }
    }

    /** Connects to the first checked address that answers. */
    private boolean connect(EgressGate.Verdict verdict) {
        int timeout = (int) Math.min(Integer.MAX_VALUE, gate.proxy().limits.connectTimeout().toMillis());
        for (InetAddress a : verdict.addresses()) {
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                upstream = ch;
                if (ended.get()) {
                    ch.close();
                    return false;
                }
                ch.socket().connect(new InetSocketAddress(a, target.port()), timeout);
                ch.socket().setTcpNoDelay(true);
                address = IpRange.canonical(a).getHostAddress();
                return true;
            } catch (IOException | RuntimeException e) {
                closeQuietly(ch);
            }
        }
        return false;
    }

    /**
     * Reads a tunnel's first bytes until they show whether they are a TLS ClientHello; refuses one whose server name
     * is not the tunnel's host. Returns the bytes to pass on, or null when the connection was refused or ended.
     */
    private ByteBuffer screenTls(ByteBuffer already) throws IOException {
        byte[] held = new byte[ClientHello.MAX_RECORD];
        int n = Math.min(already.remaining(), held.length);
        already.get(held, 0, n);
        while (true) {
            ClientHello.Result r = ClientHello.inspect(held, n);
            switch (r.kind()) {
                case NOT_TLS:
                    return ByteBuffer.wrap(held, 0, n);
                case MALFORMED:
                    return refuseTunnel("the tunnel's first bytes are a TLS handshake whose ClientHello cannot be "
                            + "read");
                case HELLO:
                    Optional<String> sni = r.serverName();
                    if (sni.isPresent() && !EgressTarget.normalize(sni.get()).equals(target.host())) {
                        return refuseTunnel("the TLS server name '" + sni.get().replaceAll("[^\\x21-\\x7e]", "?")
                                + "' is not the tunnel's host "
                                + target.host() + " (domain fronting is refused)");
                    }
                    return ByteBuffer.wrap(held, 0, n);
                default:
                    ByteBuffer into = ByteBuffer.wrap(held, n, held.length - n);
                    int read = client.read(into);
                    if (read < 0) {
                        return ByteBuffer.wrap(held, 0, n);
                    }
                    lastActivity = System.nanoTime();
                    n += read;
            }
        }
    }

    private ByteBuffer refuseTunnel(String why) {
        outcome = EgressEvent.Outcome.DENIED;
        reason = "egress to " + target + " refused: " + why;
        end();
        return null;
    }

    private void active() {
        lastActivity = System.nanoTime();
    }

    /**
     * Plain HTTP: the host's one response, then the end of the connection. After a whole response the program's
     * side is closed in two steps: first only for writing, so the program reads the response to its end, and the
     * socket itself a moment later (closing a socket with unread input, a second request say, would reset it and could
     * drop the response the program has not read yet).
     */
    private void carryResponse(boolean headRequest) {
        boolean whole = false;
        try {
            whole = HttpFraming.response(new HttpFraming.Source(upstream, ByteBuffer.allocate(0), this::active),
                    b -> send(b, client, down), headRequest);
        } catch (IOException | RuntimeException e) {
            // ended
        } finally {
            if (whole && !ended.get()) {
                lingering = true;
                try {
                    client.shutdownOutput();
                } catch (IOException e) {
                    // closed below anyway
                }
                closeQuietly(upstream);
                try {
                    gate.proxy().watchdog.schedule(this::end, LINGER_MILLIS, TimeUnit.MILLISECONDS);
                } catch (RuntimeException e) {
                    end();
                }
            } else {
                end();
            }
            finish();
        }
    }

    private void carryDown() {
        try {
            carry(upstream, client, down);
        } catch (IOException | RuntimeException e) {
            // ended
        } finally {
            finish();
        }
    }

    /** Carries a tunnel's bytes from one side to the other until the source is done, then half-closes the other. */
    private void carry(SocketChannel from, SocketChannel to, AtomicLong counter) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER); // the channels copy to and from direct buffers anyway
        while (!ended.get()) {
            buf.clear();
            int n = from.read(buf);
            if (n < 0) {
                break;
            }
            lastActivity = System.nanoTime();
            buf.flip();
            if (!send(buf, to, counter)) {
                return;
            }
        }
        try {
            to.shutdownOutput();
        } catch (IOException e) {
            end();
        }
    }

    /** Writes all of {@code buf}, counting it against the budget; false when the budget ended the connection. */
    private boolean send(ByteBuffer buf, SocketChannel to, AtomicLong counter) throws IOException {
        int n = buf.remaining();
        if (n == 0) {
            return true;
        }
        if (!gate.consume(n)) {
            outcome = EgressEvent.Outcome.LIMITED;
            reason = "egress to " + target + " ended: the workspace used its egress budget of "
                    + gate.proxy().limits.maxBytes() + " bytes";
            end();
            return false;
        }
        while (buf.hasRemaining()) {
            to.write(buf);
        }
        counter.addAndGet(n);
        lastActivity = System.nanoTime();
        return true;
    }

    private void limited(EgressTarget.Kind kind, String why) throws IOException {
        outcome = EgressEvent.Outcome.LIMITED;
        reason = why;
        refuse(kind, 429, ProxyRequest.SOCKS_GENERAL_FAILURE);
    }

    private void refuse(EgressTarget.Kind kind, int status, int socksCode) throws IOException {
        try {
            ProxyRequest.write(client, ProxyRequest.refusal(kind, status, socksCode, reason));
        } finally {
            end();
        }
    }

    void awaitingApproval(boolean waiting) {
        awaitingApproval = waiting;
        lastActivity = System.nanoTime();
    }

    /**
     * True when the connection has waited too long: for its request ({@link #REQUEST_TIMEOUT_NANOS}), or with no
     * byte either way ({@code idleNanos}); never while the approver is being asked.
     */
    boolean expired(long now, long idleNanos) {
        if (awaitingApproval) {
            return false;
        }
        if (target == null && reason.isEmpty()) {
            return now - startedNanos > Math.min(REQUEST_TIMEOUT_NANOS, idleNanos);
        }
        return now - lastActivity > idleNanos;
    }

    void endIdle() {
        if (!ended.get() && outcome.connected()) {
            outcome = EgressEvent.Outcome.LIMITED;
            reason = "egress to " + target + " ended: no bytes either way for "
                    + gate.proxy().limits.idleTimeout().toSeconds() + " s";
        }
        end();
    }

    /** Ends the connection: both sockets are closed, which wakes both carrying threads. */
    void end() {
        if (ended.compareAndSet(false, true)) {
            closeQuietly(client);
            closeQuietly(upstream);
            if (lingering) {
                gate.ended(this); // counted until its socket really closed
            }
        }
    }

    private void finish() {
        if (carriers.decrementAndGet() > 0) {
            return;
        }
        if (!lingering) {
            end();
            gate.ended(this);
        }
        if (target != null && reported.compareAndSet(false, true)) {
            gate.proxy().report(new EgressEvent(started, gate.workspaceId(), target, outcome, rule, reason, address,
                    up.get(), down.get(), Duration.ofNanos(System.nanoTime() - startedNanos)));
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
