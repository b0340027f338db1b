package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.StreamFrames;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One egress tunnel of a workspace: a long-lived exec of the {@link PodRelay} in the workspace's pod, and the engine's
 * end of it, which hands every connection the relay accepted to the workspace's gate, on its Unix-domain socket (no
 * other process of this host can reach the gate through a TCP port). The gate decides each connection: policy,
 * approval, limits, events are the core proxy's. When the gate cannot be reached (it was closed), the connection is
 * answered with a 502 that says so, as the other backends' forwarder answers.
 *
 * <p>Everything the relay sends may be a program's (it runs as the pod's user): a {@link StreamFrames.Malformed}
 * frame ends this tunnel (the exec is closed, every connection with it) and nothing else; at most
 * {@code maxConnections} connections are carried at once (the gate's own limit and a margin: the gate answers those
 * over its limit itself), and an {@code OPEN} beyond that is refused here.
 *
 * <p>Thread roles: the websocket's thread only queues the relay's stdout chunks (it is asked for the next one only
 * when the reader took one: {@code holdStdout}) and keeps the start of its stderr. One reader thread per tunnel
 * ({@code codeexec-kubernetes-tunnel-<pod>}) decodes the frames, connects to the gate and writes the program's bytes
 * into each gate connection (a blocking write: a connection whose far side does not read holds up this workspace's
 * tunnel, and only it, until the gate ends the connection). One pump per connection, on the engine's executor, reads
 * the gate's side and sends it as frames; {@link ExecSocket#send} orders the senders, one frame per message. The
 * connection map is concurrent; a connection is dropped once, by whoever removes it from the map. No lock is held
 * over I/O.
 */
final class PodTunnel implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodTunnel.class);

    /** What a program reads when the gate is down, as the other backends' forwarder answers. */
    static final byte[] UNAVAILABLE = ("HTTP/1.1 502 the engine's egress proxy is not running; no connection can "
            + "leave the pod\r\nX-Proxy-Error: proxy-unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);

    private static final Object EOF = new Object();
    private static final int STDERR_KEPT = 4096;

    private final String pod;
    private final Path gate;
    private final int maxConnections;
    private final Executor pumps;
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final StringBuilder stderr = new StringBuilder();
    private final Map<Integer, Conn> conns = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final TunnelFrames.Decoder decoder = new TunnelFrames.Decoder();
    private volatile ExecSocket socket;
    private final java.util.concurrent.atomic.AtomicInteger peak = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean ended;

    private PodTunnel(String pod, Path gate, int maxConnections, Executor pumps) {
        this.pod = pod;
        this.gate = gate;
        this.maxConnections = maxConnections;
        this.pumps = pumps;
    }

    /**
     * Starts the relay in {@code pod} and returns once it listens.
     *
     * @param gate           the workspace gate's socket
     * @param maxConnections the most connections carried at once
     * @param pumps          runs one pump per connection
     * @throws BackendUnavailableException when the relay does not start (its reason named), or the exec fails
     */
    static PodTunnel open(PodExec exec, String pod, PodScripts.Reaper reaper, Path gate, int maxConnections,
                          Executor pumps, Duration timeout) {
        PodTunnel t = new PodTunnel(pod, gate, maxConnections, pumps);
        ExecSocket s = exec.open(pod, p -> PodRelay.argv(reaper), true, t::received, true);
        t.socket = s;
        s.closed().whenComplete((v, e) -> t.inbox.add(EOF));
        Thread reader = new Thread(t::read, "codeexec-kubernetes-tunnel-" + pod);
        reader.setDaemon(true); // it ends with its exec; the JVM's end ends both
        reader.start();
        try {
            byte[] script = PodRelay.preamble(reaper);
            s.send(script, 0, script.length);
            t.ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return t;
        } catch (IOException | ExecutionException | TimeoutException e) {
            String why = t.why();
            t.end();
            throw new BackendUnavailableException("the egress relay did not start in pod " + pod + why
                    + "; the image needs perl or python3 for an egress policy", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.end();
            throw new BackendUnavailableException("interrupted while starting the egress relay in pod " + pod, e);
        }
    }

    /** The relay's reason for not starting (its first line of stderr), once its exec ended, or nothing. */
    private String why() {
        try {
            socket.closed().get(5, TimeUnit.SECONDS); // its stderr came before the stream closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // no more to say than what came
        }
        synchronized (stderr) {
            String err = stderr.toString().strip();
            return err.isEmpty() ? "" : " (" + err.lines().findFirst().orElse("") + ")";
        }
    }

    /** On the websocket's thread: queue stdout (held until the reader takes it), keep the start of stderr. */
    private void received(StdStream stream, byte[] b, int off, int len) {
        if (stream == StdStream.STDOUT) {
            inbox.add(java.util.Arrays.copyOfRange(b, off, off + len));
        } else {
            synchronized (stderr) {
                if (stderr.length() < STDERR_KEPT) {
                    stderr.append(new String(b, off, Math.min(len, STDERR_KEPT - stderr.length()),
                            StandardCharsets.UTF_8));
                }
            }
        }
    }

    /** The reader thread: frames in, until the exec ends or breaks the format. */
    private void read() {
        try {
            while (true) {
                Object c = inbox.take();
                if (c == EOF) {
                    break;
                }
                byte[] b = (byte[]) c;
                decoder.feed(b, 0, b.length, this::frame);
                socket.request();
            }
        } catch (StreamFrames.Malformed m) {
            LOG.warn("egress tunnel of pod {}: {}; the tunnel ends (the next run starts another)", pod,
                    m.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("egress tunnel of pod {} failed: {}", pod, e.toString());
        } finally {
            end();
        }
    }

    private void frame(byte type, int id, byte[] b, int off, int len) throws StreamFrames.Malformed {
        if (!ready.isDone()) {
            if (type != TunnelFrames.READY || id != 0) {
                throw new StreamFrames.Malformed("a " + TunnelFrames.name(type) + " frame before READY");
            }
            ready.complete(null);
            return;
        }
        switch (type) {
            case TunnelFrames.OPEN -> open(id);
            case TunnelFrames.DATA -> {
                Conn c = conns.get(id);
                if (c != null) {
                    c.write(b, off, len);
                }
            }
            case TunnelFrames.END -> {
                Conn c = conns.get(id);
                if (c != null) {
                    c.relayEnded();
                }
            }
            case TunnelFrames.CLOSE -> {
                Conn c = conns.get(id);
                if (c != null) {
                    c.drop(false);
                }
            }
            default -> throw new StreamFrames.Malformed("a second READY frame");
        }
    }

    private void open(int id) throws StreamFrames.Malformed {
        if (conns.containsKey(id)) {
            throw new StreamFrames.Malformed("OPEN of connection " + Integer.toUnsignedString(id)
                    + ", which is open");
        }
        if (conns.size() >= maxConnections) {
            refuse(id, ("HTTP/1.1 429 egress refused: the workspace's tunnel already has " + maxConnections
                    + " connections open\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return;
        }
        SocketChannel ch;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException e) {
            refuse(id, UNAVAILABLE);
            return;
        }
        try {
            ch.connect(UnixDomainSocketAddress.of(gate));
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            refuse(id, UNAVAILABLE);
            return;
        }
        Conn c = new Conn(id, ch);
        conns.put(id, c);
        peak.accumulateAndGet(conns.size(), Math::max);
        if (ended) {
            c.drop(false);
            return;
        }
        try {
            pumps.execute(c::pump);
        } catch (RuntimeException e) {
            c.drop(true);
        }
    }

    /** Answers a connection the engine does not carry, then forgets it. */
    private void refuse(int id, byte[] answer) {
        send(TunnelFrames.encode(TunnelFrames.DATA, id, answer, 0, answer.length));
        send(TunnelFrames.encode(TunnelFrames.CLOSE, id));
    }

    /** Sends one frame; false when the exec is gone (the tunnel ends). */
    private boolean send(byte[] frame) {
        try {
            socket.send(frame, 0, frame.length);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether the relay's exec still runs (as far as the engine has heard). */
    boolean alive() {
        ExecSocket s = socket;
        return !ended && s != null && !s.closed().isDone();
    }

    /** Connections carried now. */
    int connections() {
        return conns.size();
    }

    /** The most connections carried at once so far. */
    int peakConnections() {
        return peak.get();
    }

    /** Asks the relay to exit, then ends the tunnel. */
    @Override
    public void close() {
        if (alive()) {
            send(TunnelFrames.encode(TunnelFrames.BYE, 0));
        }
        end();
    }

    private void end() {
        ended = true;
        ExecSocket s = socket;
        if (s != null && !s.closed().isDone()) {
            s.close(); // the relay's stdin ends with the stream: it exits
        }
        for (Conn c : conns.values()) {
            c.drop(false);
        }
        ready.completeExceptionally(new IOException("the relay's exec ended"));
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    /** One carried connection: the gate's side of it, and which ends were reached. */
    private final class Conn {
        final int id;
        final SocketChannel gate;
        private volatile boolean relayEnded;
        private volatile boolean gateEnded;

        Conn(int id, SocketChannel gate) {
            this.id = id;
            this.gate = gate;
        }

        /** On the reader thread: the program's bytes into the gate. */
        void write(byte[] b, int off, int len) {
            if (relayEnded) {
                return;
            }
            try {
                ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    gate.write(buf);
                }
            } catch (IOException e) {
                drop(true);
            }
        }

        /** On the reader thread: the program ended its side. */
        void relayEnded() {
            relayEnded = true;
            try {
                gate.shutdownOutput();
            } catch (IOException e) {
                drop(true);
                return;
            }
            if (gateEnded) {
                drop(true);
            }
        }

        /** On a pump thread: the gate's bytes to the relay, then its end. */
        void pump() {
            Thread.currentThread().setName("codeexec-kubernetes-egress-" + pod + "-" + Integer.toUnsignedString(id));
            ByteBuffer buf = ByteBuffer.allocate(TunnelFrames.MAX_PAYLOAD);
            try {
                while (true) {
                    buf.clear();
                    int n = gate.read(buf);
                    if (n < 0) {
                        gateEnded = true;
                        send(TunnelFrames.encode(TunnelFrames.END, id));
                        if (relayEnded) {
                            drop(true);
                        }
                        return;
                    }
                    if (n > 0 && !send(TunnelFrames.encode(TunnelFrames.DATA, id, buf.array(), 0, n))) {
                        drop(false);
                        return;
                    }
                }
            } catch (IOException e) {
                drop(true);
            }
        }

        /** Forgets the connection once; tells the relay unless it was the relay that dropped it. */
        void drop(boolean tellRelay) {
            if (!conns.remove(id, this)) {
                return;
            }
            closeQuietly(gate);
            if (tellRelay && !ended) {
                send(TunnelFrames.encode(TunnelFrames.CLOSE, id));
            }
        }
    }
}
