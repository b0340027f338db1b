package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The kernel side of the wire protocol on jeromq, driven step by step by a test: it binds the five sockets of a
 * {@link ConnectionInfo}, receives requests and sends replies and IOPub messages, signed with the connection key or
 * with anything else. The heartbeat is echoed from a thread of its own while {@link #echoHeartbeats} is on. Except for
 * that thread, use it from the test's thread only (jeromq sockets are not thread-safe).
 */
final class FakeKernel implements AutoCloseable {

    /** A request as the kernel received it. */
    record Received(byte[] identity, byte[] header, String msgType, String msgId, JsonNode content) {
    }

    final ConnectionInfo info = ConnectionInfo.allocate();
    private final ObjectMapper json = new ObjectMapper();
    private final WireCodec codec = new WireCodec(info.key());
    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket shell = bind(SocketType.ROUTER, info.shellAddress());
    private final ZMQ.Socket control = bind(SocketType.ROUTER, info.controlAddress());
    private final ZMQ.Socket stdin = mandatory(bind(SocketType.ROUTER, info.stdinAddress()));
    private final ZMQ.Socket iopub = bind(SocketType.PUB, info.iopubAddress());
    private final AtomicBoolean echo = new AtomicBoolean(true);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread heartbeat;

    FakeKernel() {
        ZMQ.Socket hb = zmq.createSocket(SocketType.ROUTER);
        hb.setLinger(0);
        hb.bind(info.hbAddress());
        heartbeat = new Thread(() -> {
            hb.setReceiveTimeOut(50);
            while (!closed.get()) {
                List<byte[]> frames = recvAll(hb);
                if (frames != null && echo.get()) {
                    send(hb, frames);
                }
            }
            zmq.destroySocket(hb);
        }, "fake-kernel-hb");
        heartbeat.setDaemon(true);
        heartbeat.start();
    }

    void echoHeartbeats(boolean on) {
        echo.set(on);
    }

    private ZMQ.Socket bind(SocketType type, String address) {
        ZMQ.Socket s = zmq.createSocket(type);
        s.setLinger(0);
        s.setReceiveTimeOut(30_000);
        s.bind(address);
        return s;
    }

    Received recvShell() {
        return recv(shell);
    }

    Received recvStdin() {
        return recv(stdin);
    }

    Received recvControl() {
        return recv(control);
    }

    private Received recv(ZMQ.Socket s) {
        List<byte[]> frames = recvAll(s);
        if (frames == null) {
            throw new AssertionError("the fake kernel received nothing within 30 s");
        }
        WireCodec.Decoded d = codec.decode(frames);
        if (!d.ok()) {
            throw new AssertionError("the client sent a message the kernel must drop: " + d.problem());
        }
        try {
            JsonNode h = json.readTree(d.header());
            return new Received(frames.get(0), d.header(), h.path("msg_type").asText(), h.path("msg_id").asText(),
                    json.readTree(d.content()));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A reply on shell to the client that sent {@code to}. */
    void reply(Received to, String msgType, String content) {
        List<byte[]> frames = new ArrayList<>();
        frames.add(to.identity());
        frames.addAll(signed(codec, msgType, to.header(), content));
        send(shell, frames);
    }

    /** A message on stdin to the identity that sent {@code to}, as a kernel asks for input. */
    void askInput(Received to) {
        List<byte[]> frames = new ArrayList<>();
        frames.add(to.identity());
        frames.addAll(signed(codec, "input_request", to.header(), "{\"prompt\":\"? \",\"password\":false}"));
        // A ROUTER drops a message to a peer that has not connected yet: wait until the client's stdin DEALER has
        // (the mandatory ROUTER refuses the first frame until then), within the same bound as every receive.
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!trySend(stdin, frames)) {
            if (System.nanoTime() > end) {
                throw new AssertionError("the client's stdin socket did not connect within 30 s");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static ZMQ.Socket mandatory(ZMQ.Socket router) {
        router.setRouterMandatory(true);
        return router;
    }

    /** Sends all frames, or nothing when the ROUTER does not know the addressed peer yet. */
    private static boolean trySend(ZMQ.Socket s, List<byte[]> frames) {
        try {
            if (!s.send(frames.get(0), ZMQ.SNDMORE)) {
                return false;
            }
        } catch (org.zeromq.ZMQException e) {
            return false;
        }
        for (int i = 1; i < frames.size(); i++) {
            s.send(frames.get(i), i < frames.size() - 1 ? ZMQ.SNDMORE : 0);
        }
        return true;
    }

    /** An IOPub message whose parent is {@code parentHeader}, signed with the connection key. */
    void publish(byte[] parentHeader, String msgType, String content) {
        publishWith(codec, parentHeader, msgType, content);
    }

    /** The same, signed with another key. */
    void publishForged(byte[] parentHeader, String msgType, String content) {
        publishWith(new WireCodec("some-other-key"), parentHeader, msgType, content);
    }

    /** Raw frames on IOPub, after a topic frame. */
    void publishRaw(List<byte[]> frames) {
        List<byte[]> all = new ArrayList<>();
        all.add(b("kernel.fake.raw"));
        all.addAll(frames);
        send(iopub, all);
    }

    /** A header as a kernel would put it in parent_header, for a request id of the test's choosing. */
    byte[] headerFor(String msgId) {
        return b("{\"msg_id\":\"" + msgId + "\",\"msg_type\":\"execute_request\",\"session\":\"s\",\"username\":\"u\","
                + "\"date\":\"2026-01-01T00:00:00Z\",\"version\":\"5.3\"}");
    }

    private void publishWith(WireCodec c, byte[] parentHeader, String msgType, String content) {
        List<byte[]> frames = new ArrayList<>();
        frames.add(b("kernel.fake." + msgType));
        frames.addAll(signed(c, msgType, parentHeader, content));
        send(iopub, frames);
    }

    private List<byte[]> signed(WireCodec c, String msgType, byte[] parent, String content) {
        byte[] header = b("{\"msg_id\":\"" + UUID.randomUUID() + "\",\"msg_type\":\"" + msgType + "\",\"session\":"
                + "\"fake\",\"username\":\"kernel\",\"date\":\"2026-01-01T00:00:00Z\",\"version\":\"5.3\"}");
        return c.encode(header, parent, b("{}"), b(content));
    }

    private static List<byte[]> recvAll(ZMQ.Socket s) {
        byte[] first = s.recv(0);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(List.of(first));
        while (s.hasReceiveMore()) {
            frames.add(s.recv(0));
        }
        return frames;
    }

    private static void send(ZMQ.Socket s, List<byte[]> frames) {
        for (int i = 0; i < frames.size(); i++) {
            s.send(frames.get(i), i < frames.size() - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static boolean same(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }

    @Override
    public void close() {
        closed.set(true);
        try {
            heartbeat.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (ZMQ.Socket s : List.of(shell, control, stdin, iopub)) {
            zmq.destroySocket(s);
        }
        zmq.close();
    }
}
