package dev.codeexec.jupyter;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.StreamFrames;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kernel inside another engine's boundary, reached through a relay: the relay program ({@code kernel_relay.py},
 * Python standard library only) is started through the engine's {@link KernelLauncher} as an ordinary program of the
 * workspace (so it gets what a run gets: mounts, user, limits, network and environment policy), starts ipykernel as a
 * child with transport {@code ipc} in a private directory (nothing listens on a TCP port inside the boundary), and
 * carries each connection of the kernel's client as {@link RelayFrames} over its stdin and stdout. On this side the
 * unchanged {@link KernelClient} connects to {@link RelayListeners} (loopback, this JVM's connections only); the key
 * travels in the first frame, never on argv.
 *
 * <p>Everything the relay writes to its stdout may be the workspace code's (it runs as the workspace's user): frames
 * are decoded with bounds, and a stream that breaks the format ends this kernel (never the engine). Its stderr (the
 * kernel's own output) is kept in a bounded log.
 *
 * <p>Thread roles: the backend's output thread decodes the relay's stdout and writes to the client's connections (the
 * {@code OutputSink}); one reader thread per connection ({@code codeexec-kernel-relay-<kernel>-<channel>}) frames
 * what the client sends; the acceptor of {@link RelayListeners}. Frames to the relay are written whole under
 * {@code stdinLock}, which is held for nothing else. The backend's exit future reports the end.
 */
final class KernelRelay implements KernelProcess {

    private static final Logger LOG = LoggerFactory.getLogger(KernelRelay.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String SHIM_RESOURCE = "kernel_relay.py";
    private static volatile String shim;

    private final String label;
    private final KernelLauncher launcher;
    private final Workspace ws;
    private final String python;
    private final RelayListeners listeners;
    private final ConnectionInfo conn;
    private final StreamFrames.Decoder decoder = new StreamFrames.Decoder(RelayFrames.FROM_RELAY);
    private final LogTail log = new LogTail(64 * 1024);
    private final Map<Integer, Connection> connections = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final AtomicBoolean runReleased = new AtomicBoolean();
    private final AtomicBoolean released = new AtomicBoolean();
    private final Object stdinLock = new Object();
    /** One look at out/ at a time ({@link #outputsSeenEmpty}); numbers its LOOK frames. */
    private final Object lookLock = new Object();
    private int lookNumber;
    /** The look waiting for its answer, and its number; null between looks. */
    private volatile CompletableFuture<Boolean> look;
    private volatile int lookId;
    private volatile PreparedRun run;
    private volatile ChannelProcess process;
    private volatile Consumer<String> onEnd = r -> { };
    private volatile boolean ready;
    private volatile boolean failReported;
    private volatile String broken;

    /**
     * Listeners on loopback and a new key; nothing is started yet.
     *
     * @param python the Python inside the boundary: it runs the relay and, as a child, ipykernel
     */
    KernelRelay(String label, KernelLauncher launcher, Workspace ws, String python) {
        this(label, launcher, ws, python, new RelayListeners(label));
    }

    KernelRelay(String label, KernelLauncher launcher, Workspace ws, String python, RelayListeners listeners) {
        this.label = label;
        this.launcher = launcher;
        this.ws = ws;
        this.python = python;
        this.listeners = listeners;
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        this.conn = new ConnectionInfo(listeners.port("shell"), listeners.port("iopub"), listeners.port("stdin"),
                listeners.port("control"), listeners.port("hb"), HexFormat.of().formatHex(key));
    }

    /** The relay's source, run with {@code python -I -c}. */
    static String shim() {
        String s = shim;
        if (s == null) {
            try (InputStream in = KernelRelay.class.getResourceAsStream(SHIM_RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException("the resource " + SHIM_RESOURCE + " is missing");
                }
                s = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            shim = s;
        }
        return s;
    }

    /** The relay's run: {@code python -I -c <relay>} from the workspace's {@code work/}, as long as the kernel lives. */
    RunProgramSpec spec() {
        return RunProgramSpec.builder(python).args("-I", "-c", shim()).cwd("work").timeout(Kernel.LIFETIME).build();
    }

    @Override
    public ConnectionInfo connection() {
        return conn;
    }

    @Override
    public void launch(Consumer<String> end) {
        this.onEnd = end;
        PreparedRun r = launcher.prepare(ws, spec());
        run = r;
        ChannelProcess p;
        try {
            p = r.channel().start(r.launch(), this::output);
        } catch (RuntimeException e) {
            releaseRun();
            throw e;
        }
        process = p;
        p.exit().whenComplete((status, e) -> {
            exit.complete(status);
            onEnd.accept(endReason(status));
            closeConnections();
        });
        CompletableFuture.allOf(p.exit(), p.outputEnd()).whenComplete((v, e) -> releaseRun());
        send(StreamFrames.encode(RelayFrames.HELLO, 0, hello(), 0, hello().length));
        listeners.start(this::connected);
    }

    private byte[] hello() {
        return ("{\"key\":\"" + conn.key() + "\"}").getBytes(StandardCharsets.US_ASCII);
    }

    private String endReason(Integer status) {
        if (broken != null) {
            return "the kernel's relay broke the frame format (" + broken + "), so the kernel was stopped";
        }
        if (failReported || (status != null && status == RelayFrames.NO_IPYKERNEL)) {
            return "the Python inside the boundary cannot import ipykernel";
        }
        return Kernel.describeExit(status);
    }

    @Override
    public void ready() {
        // Nothing to clean up: the relay deletes its private directory when it exits.
    }

    @Override
    public BackendUnavailableException startFailure(String reason) {
        ChannelProcess p = process;
        if (p != null) {
            try {
                p.outputEnd().get(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                // the log is as complete as it gets
            }
        }
        Integer status = exit.getNow(null);
        if (failReported || (status != null && status == RelayFrames.NO_IPYKERNEL)) {
            return new BackendUnavailableException("the Python inside the boundary ('" + python + "') cannot import "
                    + "ipykernel, so python cells cannot run in a kernel there: install ipykernel for that Python "
                    + "(Debian: apt-get install python3-ipykernel; else pip install ipykernel), or name another "
                    + "Python with KernelOptions.python");
        }
        return new BackendUnavailableException("the kernel inside the boundary could not start: " + reason
                + Kernel.lastLine(logTail()) + ". Its log is in the application log.");
    }

    @Override
    public String logTail() {
        String s = log.text();
        return s.length() > 4000 ? "..." + s.substring(s.length() - 4000) : s;
    }

    @Override
    public void signalInterrupt() {
        send(StreamFrames.encode(RelayFrames.SIGNAL, 0));
    }

    /**
     * Asks the relay whether {@code $OUTPUT_DIR} is a real, empty directory now and waits for its answer, bounded.
     * Frames on the relay's stdin are handled in order, so a look sent after a cell's reply arrived sees what the cell
     * left. The answer comes from inside the boundary and may be a program's: a false "empty" only hides the
     * workspace's own files from one result, as deleting them would; it never reads or lists anything on the host.
     * An answer to an earlier look (one that timed out) has another number and is ignored.
     */
    @Override
    public boolean outputsSeenEmpty(long timeoutNanos) {
        if (!ready || exit.isDone() || broken != null) {
            return false;
        }
        synchronized (lookLock) {
            int id = ++lookNumber;
            CompletableFuture<Boolean> answer = new CompletableFuture<>();
            lookId = id;
            look = answer;
            try {
                if (!send(StreamFrames.encode(RelayFrames.LOOK, id))) {
                    return false;
                }
                return answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException | TimeoutException e) {
                return false; // no answer in time: the caller collects as usual
            } finally {
                look = null;
            }
        }
    }

    @Override
    public void killTree() {
        ChannelProcess p = process;
        if (p != null) {
            p.killTree();
        }
    }

    @Override
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    @Override
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        listeners.close();
        killTree();
        closeConnections();
        if (process == null) {
            releaseRun();
        }
    }

    private void releaseRun() {
        PreparedRun r = run;
        if (r != null && runReleased.compareAndSet(false, true)) {
            try {
                r.release();
            } catch (RuntimeException e) {
                LOG.warn("kernel {}: releasing its run failed: {}", label, e.toString());
            }
        }
    }

    // ---- the relay's output (the backend's output thread) ----

    private void output(StdStream stream, byte[] b, int off, int len) {
        if (stream == StdStream.STDERR) {
            log.write(b, off, len);
            return;
        }
        if (broken != null) {
            return;
        }
        try {
            decoder.feed(b, off, len, this::frame);
        } catch (StreamFrames.Malformed e) {
            broken = e.getMessage();
            LOG.warn("kernel {}: its relay broke the frame format ({}); the kernel is stopped", label, broken);
            onEnd.accept(endReason(null));
            killTree();
        }
    }

    private void frame(byte type, int id, byte[] b, int off, int len) throws StreamFrames.Malformed {
        if (type == RelayFrames.FAIL) {
            failReported = true;
            return;
        }
        if (type == RelayFrames.EXIT) {
            return; // the program's own end follows and says the same
        }
        if (type == RelayFrames.READY) {
            if (ready || id != 0) {
                throw new StreamFrames.Malformed("a second READY frame");
            }
            ready = true;
            return;
        }
        if (!ready) {
            throw new StreamFrames.Malformed("a frame of type " + type + " before READY");
        }
        if (type == RelayFrames.OUTPUTS) {
            CompletableFuture<Boolean> waiting = look;
            if (waiting != null && id == lookId) {
                waiting.complete(len == 1 && b[off] == '0');
            }
            return;
        }
        Connection c = connections.get(id);
        if (c == null) {
            return; // a connection this side already dropped
        }
        switch (type) {
            case RelayFrames.DATA -> c.write(b, off, len);
            case RelayFrames.END -> c.endFromKernel();
            default -> c.drop(false);
        }
    }

    // ---- frames to the relay ----

    /** Writes a whole frame to the relay's stdin; false when it is gone. */
    private boolean send(byte[] frame) {
        ChannelProcess p = process;
        if (p == null) {
            return false;
        }
        synchronized (stdinLock) {
            try {
                p.stdin().write(frame);
                p.stdin().flush();
                return true;
            } catch (IOException e) {
                return false; // the relay ended: its exit reports it
            }
        }
    }

    private void connected(String channel, SocketChannel sc) {
        int id = nextId.incrementAndGet();
        Connection c = new Connection(id, channel, sc);
        connections.put(id, c);
        byte[] name = channel.getBytes(StandardCharsets.US_ASCII);
        send(StreamFrames.encode(RelayFrames.OPEN, id, name, 0, name.length));
        c.start();
    }

    private void closeConnections() {
        for (Connection c : connections.values()) {
            c.drop(false);
        }
    }

    /** One connection of the client, carried to the kernel through the relay. */
    private final class Connection {
        private final int id;
        private final SocketChannel sc;
        private final Thread reader;
        private final AtomicBoolean dropped = new AtomicBoolean();
        private volatile boolean clientEnded;
        private volatile boolean kernelEnded;

        Connection(int id, String channel, SocketChannel sc) {
            this.id = id;
            this.sc = sc;
            this.reader = new Thread(this::pump, "codeexec-kernel-relay-" + label + "-" + channel);
            reader.setDaemon(true);
        }

        void start() {
            reader.start();
        }

        /**
         * Reader thread: what the client sends becomes DATA frames; its end an END frame. After that it waits for
         * the kernel's end (the output thread then closes the socket) so that the relay is told here.
         */
        private void pump() {
            ByteBuffer buf = ByteBuffer.allocate(RelayFrames.MAX_PAYLOAD);
            try {
                while (true) {
                    buf.clear();
                    int n = sc.read(buf);
                    if (n < 0) {
                        send(StreamFrames.encode(RelayFrames.END, id));
                        clientEnded = true;
                        if (kernelEnded) {
                            drop(true);
                        }
                        break;
                    }
                    if (n > 0 && !send(StreamFrames.encode(RelayFrames.DATA, id, buf.array(), 0, n))) {
                        drop(false);
                        return;
                    }
                }
            } catch (IOException e) {
                drop(true);
            }
        }

        /** Output thread: bytes from the kernel to the client. */
        void write(byte[] b, int off, int len) {
            try {
                ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    sc.write(buf);
                }
            } catch (IOException e) {
                fail();
            }
        }

        /** Output thread: the kernel's side reached its end. */
        void endFromKernel() {
            kernelEnded = true;
            try {
                sc.shutdownOutput();
            } catch (IOException e) {
                fail();
                return;
            }
            if (clientEnded) {
                fail();
            }
        }

        /**
         * Output thread: the connection is done with. It never writes to the relay's stdin itself (the relay may be
         * blocked writing to its stdout, which this thread reads): closing the socket ends the reader thread, which
         * drops the connection and tells the relay.
         */
        private void fail() {
            RelayListeners.closeQuietly(sc);
            if (clientEnded) {
                drop(false); // the reader is done; the relay drops a connection ended both ways by itself
            }
        }

        void drop(boolean tellRelay) {
            if (!dropped.compareAndSet(false, true)) {
                return;
            }
            connections.remove(id, this);
            RelayListeners.closeQuietly(sc);
            if (tellRelay) {
                send(StreamFrames.encode(RelayFrames.CLOSE, id));
            }
        }
    }
}
