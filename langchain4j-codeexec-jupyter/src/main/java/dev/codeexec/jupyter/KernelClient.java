package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.io.IOException;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A client of one kernel over the Jupyter messaging protocol 5.x on jeromq: the shell, control and stdin DEALERs, the
 * IOPub SUB and the heartbeat REQ; every message sent is signed and every message received is verified (a message
 * with a bad signature or a broken frame layout is dropped, counted and logged); replies and side effects are routed
 * to the request they answer by {@code parent_header.msg_id}.
 *
 * <h2>Thread roles</h2>
 * <ul>
 *   <li><b>The socket reader</b> ({@code codeexec-jupyter-io-<kernel>}), one per kernel, is the only thread that
 *       touches this kernel's jeromq sockets and its {@link WireCodec} ({@link KernelSockets}): jeromq sockets are not
 *       thread-safe, and callers' threads may be interrupted at any point, which jeromq's NIO plumbing is not meant
 *       for. It connects the sockets, polls them, signs and sends what callers queued, receives, verifies and routes,
 *       and sends the heartbeats. It <em>never runs caller code</em>: routing is an {@code offer} to the request's
 *       unbounded queue, and the one callback it makes, {@code onHeartbeatDeath}, is the kernel's own non-blocking tree
 *       kill. It waits in a {@link Selector} of its own over the sockets' {@code ZMQ_FD} channels (and, after each
 *       wake-up, asks every socket for its events, as the {@code ZMQ_FD} contract requires), not in jeromq's
 *       {@code Poller}: that one reports a raw channel's stale ready set as ready on every call. jeromq leaves a socket's
 *       {@code ZMQ_FD} readable for up to its command delay (3 ms) after traffic although nothing is to be read; a
 *       wake-up that finds no work therefore backs off for {@value #SPURIOUS_BACKOFF_MICROS} µs before the next wait,
 *       instead of spinning on two cores shared with the kernel.</li>
 *   <li><b>Callers</b> (any thread) build messages, put them in the outbox, wake the reader and wait on their
 *       {@link KernelRequest}'s queue. They never touch a socket. The wake-up is {@link Selector#wakeup()} (thread-safe,
 *       never lost: it also ends the next wait, and unaffected by an interrupt of the caller, which would close an
 *       NIO pipe written to from that thread), plus an unpark in case the reader is backing off.</li>
 *   <li><b>Whoever learns that the kernel died</b> (the reader after missed heartbeats, the JDK's process reaper
 *       through {@link #markDead}) wakes every waiting request with {@link JupyterMessage#DEATH}.</li>
 * </ul>
 *
 * <h2>Lock rules</h2>
 * There are none: shared state is the outbox ({@link ConcurrentLinkedQueue}), the request table
 * ({@link ConcurrentHashMap}), per-request queues ({@link LinkedBlockingQueue}), atomics and volatiles. No thread
 * holds a lock while it waits for the kernel. The budgets of a {@link KernelRequest} are written by the reader only; the
 * consumer reads them after it took the message that completed the request (the queue's hand-over orders them).
 */
final class KernelClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KernelClient.class);

    static final String PROTOCOL_VERSION = "5.3";
    private static final byte[] EMPTY_DICT = "{}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] PING = "ping".getBytes(StandardCharsets.US_ASCII);
    /** Messages read from one socket before the others get a turn. */
    private static final int BURST = 256;
    /** {@value} µs: the pause after a wake-up that found no work (see the thread roles). */
    static final int SPURIOUS_BACKOFF_MICROS = 100;
    /** How long {@link #start} waits for the reader to connect, and {@link #close} for it to end. */
    private static final Duration READER_WAIT = Duration.ofSeconds(10);

    private final ZContext zmq;
    private final ConnectionInfo info;
    private final String name;
    private final ObjectMapper json;
    private final String session = UUID.randomUUID().toString();
    private final byte[] identity = ("codeexec-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
    private final long hbIntervalNanos;
    private final long hbTimeoutNanos;
    private final Runnable onHeartbeatDeath;

    private final Queue<Outgoing> outbox = new ConcurrentLinkedQueue<>();
    private final Map<String, KernelRequest> requests = new ConcurrentHashMap<>();
    private final AtomicReference<String> deathReason = new AtomicReference<>();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final CountDownLatch connected = new CountDownLatch(1);
    private final Selector selector;
    private final Thread reader;
    private volatile boolean heartbeatOn;
    /** Whether the engine has paused the kernel's processes, which then cannot echo (see {@link #holdHeartbeat}). */
    private volatile boolean heartbeatHeld;
    private volatile boolean stopping;
    private volatile RuntimeException readerFailure;
    /** Sockets that stopped at a full burst in this round. Reader only. */
    private int burstLeft;
    /** Rounds of the reader's loop: written by the reader only; a diagnostic against spinning. */
    private volatile long rounds;
    /** Rounds that found no work and backed off. Written by the reader only. */
    private volatile long idleRounds;
    /** When the next heartbeat ping is due, and when the last echo came (System.nanoTime). Reader only. */
    private long nextPing;
    private long lastEcho;
    /** Whether the heartbeat was on in the previous round: its clock starts when it is turned on. Reader only. */
    private boolean heartbeatWasOn;

    /** A message queued by a caller, signed and sent by the reader. */
    private record Outgoing(Channel channel, byte[] header, byte[] parent, byte[] content) {
    }

    /**
     * @param zmq              the engine's jeromq context (shared; thread-safe), in which this client's sockets live
     * @param info             the kernel's ports and key
     * @param name             names the reader thread and log lines
     * @param hbInterval       how often the heartbeat is pinged
     * @param hbTimeout        no echo for this long once {@link #enableHeartbeat() enabled} means the kernel is dead
     * @param onHeartbeatDeath run by the reader when the heartbeat declared the kernel dead; must not block
     */
    KernelClient(ZContext zmq, ConnectionInfo info, String name, ObjectMapper json, Duration hbInterval,
                 Duration hbTimeout, Runnable onHeartbeatDeath) {
        this.zmq = zmq;
        this.info = info;
        this.name = name;
        this.json = json;
        this.hbIntervalNanos = hbInterval.toNanos();
        this.hbTimeoutNanos = hbTimeout.toNanos();
        this.onHeartbeatDeath = onHeartbeatDeath;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a selector for a kernel client", e);
        }
        this.reader = new Thread(this::readLoop, "codeexec-jupyter-io-" + name);
        reader.setDaemon(true);
    }

    /**
     * Starts the reader and waits until its sockets are connected (the kernel need not be listening yet: ZeroMQ
     * connects when it binds). Connecting IOPub before the kernel starts lets the subscription reach it early.
     */
    void start() {
        reader.start();
        boolean ok;
        try {
            ok = connected.await(READER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new IllegalStateException("interrupted while connecting to the kernel");
        }
        if (readerFailure != null) {
            close();
            throw readerFailure;
        }
        if (!ok) {
            close();
            throw new IllegalStateException("the kernel client's socket reader did not start");
        }
    }

    /** From now on, a heartbeat not echoed within the timeout declares the kernel dead. */
    void enableHeartbeat() {
        heartbeatOn = true;
        wake();
    }

    /**
     * Holds or releases the heartbeat watch: while the kernel's engine has paused its processes (a sandbox freezes
     * them while it works on the workspace), missing echoes mean nothing. Released, the clock starts again.
     */
    void holdHeartbeat(boolean held) {
        heartbeatHeld = held;
        wake();
    }

    /** Why the kernel is gone, or null while it is believed alive. */
    String deathReason() {
        return deathReason.get();
    }

    /** Rounds of the socket reader's loop so far, and how many of them found no work: diagnostics. */
    long[] readerRounds() {
        return new long[] {rounds, idleRounds};
    }

    /** Messages dropped because their signature was wrong or their frames were malformed. */
    long droppedMessages() {
        return dropped.get();
    }

    /**
     * Sends a request and returns the handle its replies and side effects arrive on. Registered before it is sent, so
     * no reply can be missed. Thread-safe; does not block.
     *
     * @param budget what the reader may queue of its output before dropping (counted), or null for no limit
     * @param into   the queue its messages go to, shared by several requests; null for a queue of its own
     */
    KernelRequest request(Channel channel, String msgType, ObjectNode content, Budget budget,
                    BlockingQueue<JupyterMessage> into) {
        String msgId = UUID.randomUUID().toString();
        KernelRequest r = new KernelRequest(msgId, budget,
                into == null ? new LinkedBlockingQueue<>() : into, requests);
        requests.put(msgId, r);
        if (deathReason.get() != null) {
            r.deliverDeath();
            return r;
        }
        outbox.add(new Outgoing(channel, header(msgId, msgType), EMPTY_DICT, bytes(content)));
        wake();
        return r;
    }

    /**
     * Marks the kernel dead: every waiting request receives {@link JupyterMessage#DEATH}, later ones at once, and the
     * reader stops. Idempotent; the first reason is kept. Any thread; does not block.
     */
    void markDead(String reason) {
        deathReason.compareAndSet(null, reason);
        if (!stopping) {
            stopping = true;
            for (KernelRequest r : requests.values()) {
                r.deliverDeath();
            }
        }
        wake();
    }

    /** Marks the client dead (if it is not) and waits, bounded, for the reader to close its sockets. Idempotent. */
    @Override
    public void close() {
        markDead("the kernel client was closed");
        if (reader.isAlive() && Thread.currentThread() != reader) {
            try {
                reader.join(READER_WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (reader.isAlive()) {
                LOG.warn("kernel {}: the socket reader did not stop within {} s", name, READER_WAIT.toSeconds());
            }
        }
        if (!reader.isAlive() && selector.isOpen()) {
            closeSelector(); // the reader never ran, or ended without closing it
        }
    }

    private void wake() {
        // One wake-up per batch: the flag is cleared by the reader before it looks at the outbox.
        if (wakePending.compareAndSet(false, true)) {
            selector.wakeup();
            LockSupport.unpark(reader); // in case it is backing off
        }
    }

    private void closeSelector() {
        try {
            selector.close();
        } catch (IOException ignored) {
            // Nothing more to release.
        }
    }

    private byte[] header(String msgId, String msgType) {
        ObjectNode h = json.createObjectNode();
        h.put("msg_id", msgId);
        h.put("session", session);
        h.put("username", "codeexec");
        h.put("date", Instant.now().toString());
        h.put("msg_type", msgType);
        h.put("version", PROTOCOL_VERSION);
        return bytes(h);
    }

    private byte[] bytes(JsonNode node) {
        try {
            return json.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- the socket reader: everything below runs on it only ----

    private void readLoop() {
        List<ZMQ.Socket> all = new ArrayList<>();
        try {
            KernelSockets sockets = KernelSockets.connect(zmq, info, identity, selector, all);
            connected.countDown();
            pollUntilStopped(sockets);
        } catch (RuntimeException | IOException e) {
            readerFailed(e);
        } finally {
            connected.countDown();
            closeSelector();
            destroy(all);
        }
    }

    /** The reader's rounds: wait, send what callers queued, receive, then the heartbeat; until the client stops. */
    private void pollUntilStopped(KernelSockets s) throws IOException {
        long now = System.nanoTime();
        nextPing = now;
        lastEcho = now;
        heartbeatWasOn = false;
        int more = 0;
        while (!stopping) {
            int ready = waitForNews(more);
            rounds++;
            boolean woken = wakePending.getAndSet(false);
            int work = sendQueued(s);
            work += receiveAll(s);
            more = burstLeft;
            now = System.nanoTime();
            work += receiveEcho(s.hb(), now);
            if (ready > 0 && work == 0 && !woken) {
                idleRounds++;
                LockSupport.parkNanos(SPURIOUS_BACKOFF_MICROS * 1000L);
            }
            heartbeat(s.hb(), now);
        }
    }

    /**
     * Waits until a socket has news, a caller wakes the reader or the next ping is due (at most a second); does not
     * wait when a socket had a full burst ({@code more} above 0). Returns how many channels were ready.
     */
    private int waitForNews(int more) throws IOException {
        int ready;
        if (more > 0) {
            ready = selector.selectNow(); // a socket had a full burst: do not wait before the next
        } else {
            long waitMillis = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(nextPing - System.nanoTime()), 1000));
            ready = selector.select(waitMillis);
        }
        selector.selectedKeys().clear();
        return ready;
    }

    /** Signs and sends every message callers queued; returns how many. */
    private int sendQueued(KernelSockets s) {
        int n = 0;
        for (Outgoing o; (o = outbox.poll()) != null; n++) {
            sendFrames(s.outbound(o.channel), s.codec().encode(o.header, o.parent, EMPTY_DICT, o.content));
        }
        return n;
    }

    /** Receives from the four message sockets, a burst at most each; counts those that stopped at a full burst. */
    private int receiveAll(KernelSockets s) {
        burstLeft = 0;
        int n = received(drain(s.iopub(), Channel.IOPUB, s));
        n += received(drain(s.shell(), Channel.SHELL, s));
        n += received(drain(s.control(), Channel.CONTROL, s));
        n += received(drain(s.stdin(), Channel.STDIN, s));
        return n;
    }

    /** Takes a heartbeat echo, if one came; returns 1 if it did. */
    private int receiveEcho(ZMQ.Socket hb, long now) {
        // One receive per ping: a REQ socket refuses a second receive before the next send.
        if ((hb.getEvents() & ZMQ.Poller.POLLIN) != 0 && hb.recv(ZMQ.DONTWAIT) != null) {
            lastEcho = now;
            return 1;
        }
        return 0;
    }

    /** Pings when one is due; once the heartbeat is on, an echo missing for the timeout declares the kernel dead. */
    private void heartbeat(ZMQ.Socket hb, long now) {
        boolean on = heartbeatOn && !heartbeatHeld;
        if (on && !heartbeatWasOn) {
            lastEcho = now; // the clock starts when the kernel was found ready, and again when it is no longer held
        }
        heartbeatWasOn = on;
        if (now - nextPing >= 0) {
            hb.send(PING, ZMQ.DONTWAIT);
            nextPing = now + hbIntervalNanos;
        }
        if (on && now - lastEcho > hbTimeoutNanos) {
            // The reason first (the kill makes the process exit, which must not become the reason), then the
            // kill, then the waiters: when they wake, the kernel is on its way out.
            if (deathReason.compareAndSet(null, "the kernel stopped answering heartbeats for "
                    + TimeUnit.NANOSECONDS.toMillis(now - lastEcho) / 1000.0 + " s")) {
                onHeartbeatDeath.run();
            }
            markDead(deathReason.get());
        }
    }

    /** The reader failed: unless the client was stopping anyway, the failure is kept and the kernel marked dead. */
    private void readerFailed(Exception e) {
        if (!stopping) {
            RuntimeException failure = e instanceof RuntimeException re ? re
                    : new IllegalStateException("kernel client I/O failed", e);
            readerFailure = failure;
            LOG.error("kernel {}: the socket reader failed", name, e);
            markDead("the connection to the kernel failed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private void destroy(List<ZMQ.Socket> sockets) {
        for (ZMQ.Socket s : sockets) {
            try {
                zmq.destroySocket(s);
            } catch (RuntimeException e) {
                LOG.debug("kernel {}: closing a socket failed", name, e);
            }
        }
    }

    private static void sendFrames(ZMQ.Socket s, List<byte[]> frames) {
        for (int i = 0; i < frames.size(); i++) {
            s.send(frames.get(i), i < frames.size() - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    /** Counts a drain's messages; notes when a socket stopped at a full burst (it may have more). */
    private int received(int n) {
        if (n >= BURST) {
            burstLeft++;
        }
        return n;
    }

    /** Receives what {@code s} has, up to a burst; returns how many messages (dropped ones included). */
    private int drain(ZMQ.Socket s, Channel channel, KernelSockets sockets) {
        WireCodec codec = sockets.codec();
        int n = 0;
        for (; n < BURST; n++) {
            if ((s.getEvents() & ZMQ.Poller.POLLIN) == 0) {
                return n;
            }
            byte[] first = s.recv(ZMQ.DONTWAIT);
            if (first == null) {
                return n;
            }
            List<byte[]> frames = new ArrayList<>(8);
            frames.add(first);
            while (s.hasReceiveMore()) {
                frames.add(s.recv(0));
            }
            WireCodec.Decoded d = codec.decode(frames);
            if (!d.ok()) {
                long count = dropped.incrementAndGet();
                // The first few at WARN: one forged or corrupted message is worth seeing; a flood is not worth more.
                if (count <= 10) {
                    LOG.warn("kernel {}: dropped a message on {}: {}", name, channel, d.problem());
                } else {
                    LOG.debug("kernel {}: dropped a message on {}: {} ({} so far)", name, channel, d.problem(), count);
                }
                continue;
            }
            JupyterMessage m;
            try {
                JsonNode header = json.readTree(d.header());
                JsonNode parent = json.readTree(d.parent());
                m = new JupyterMessage(channel, header.path("msg_type").asText(""), header.path("msg_id").asText(""),
                        parent == null ? "" : parent.path("msg_id").asText(""), d.content());
            } catch (IOException e) {
                dropped.incrementAndGet();
                LOG.warn("kernel {}: dropped a signed message on {} whose header is not JSON", name, channel);
                continue;
            }
            if (channel == Channel.STDIN && m.msgType().equals("input_request")) {
                // Requests are sent with allow_stdin false, so a kernel should never ask. If one does, an empty
                // answer lets the cell go on instead of blocking until its timeout.
                sendFrames(sockets.stdin(), codec.encode(header(UUID.randomUUID().toString(), "input_reply"),
                        d.header(), EMPTY_DICT, "{\"value\":\"\"}".getBytes(StandardCharsets.UTF_8)));
            }
            route(m);
        }
        return n;
    }

    private void route(JupyterMessage m) {
        KernelRequest r = requests.get(m.parentId());
        if (r == null) {
            // Another client's, a background thread's output after idle, or a request already given up on.
            LOG.trace("kernel {}: no request for {}", name, m);
            return;
        }
        r.offer(m);
    }
}
