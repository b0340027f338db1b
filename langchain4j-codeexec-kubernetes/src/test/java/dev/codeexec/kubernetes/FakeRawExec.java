package dev.codeexec.kubernetes;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A bare exec client for tests of the fake cluster itself: the JDK's websocket, the channel protocol by hand, so a
 * test sees exactly what the server sends (each channel's bytes, the status JSON, how the socket ended). Not the
 * engine's client; thread-safe for one exec.
 */
final class FakeRawExec implements WebSocket.Listener {

    /** The outcome of a handshake refused with an HTTP status. */
    record Refused(int status, String body) {
    }

    private final ByteArrayOutputStream[] channels = new ByteArrayOutputStream[256];
    private final CompletableFuture<Integer> closed = new CompletableFuture<>();
    private ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private WebSocket socket;

    private FakeRawExec() {
        for (int i = 0; i < channels.length; i++) {
            channels[i] = new ByteArrayOutputStream();
        }
    }

    /** The exec URL of {@code pod} with {@code argv}, stdout and stderr, and stdin when asked. */
    static URI url(FakeCluster cluster, String pod, List<String> argv, boolean stdin) {
        String query = argv.stream().map(a -> "command=" + URLEncoder.encode(a, StandardCharsets.UTF_8))
                .collect(Collectors.joining("&")) + "&container=" + PodLayout.CONTAINER + "&stdout=true&stderr=true"
                + (stdin ? "&stdin=true" : "");
        URI base = cluster.url();
        return URI.create("ws://" + base.getHost() + ":" + base.getPort() + "/api/v1/namespaces/"
                + FakeCluster.NAMESPACE + "/pods/" + pod + "/exec?" + query);
    }

    /** Opens an exec offering {@code protocols}, best first; returns the client, or throws with the refusal. */
    static FakeRawExec open(URI url, String... protocols) {
        FakeRawExec exec = new FakeRawExec();
        WebSocket.Builder b = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30));
        if (protocols.length > 0) {
            b.subprotocols(protocols[0], java.util.Arrays.copyOfRange(protocols, 1, protocols.length));
        }
        exec.socket = b.buildAsync(url, exec).orTimeout(60, TimeUnit.SECONDS).join();
        return exec;
    }

    /** The HTTP status and body with which the server refused the handshake. */
    static Refused refusal(URI url, String... protocols) {
        try {
            open(url, protocols).socket.abort();
            throw new AssertionError("the handshake was accepted");
        } catch (CompletionException e) {
            if (e.getCause() instanceof WebSocketHandshakeException h) {
                Object body = h.getResponse().body();
                return new Refused(h.getResponse().statusCode(), body == null ? "" : body.toString());
            }
            throw e;
        }
    }

    /** The subprotocol the server chose. */
    String protocol() {
        return socket.getSubprotocol();
    }

    /** Sends {@code bytes} on stdin (channel 0). */
    void stdin(String text) {
        byte[] data = text.getBytes(StandardCharsets.UTF_8);
        ByteBuffer msg = ByteBuffer.allocate(data.length + 1).put((byte) 0).put(data).flip();
        socket.sendBinary(msg, true).join();
    }

    /** Sends the v5 close signal for stdin: {@code [255, 0]}. */
    void closeStdin() {
        socket.sendBinary(ByteBuffer.wrap(new byte[] {(byte) 255, 0}), true).join();
    }

    /** Closes the socket from the client side, normally. */
    void close() {
        socket.sendClose(WebSocket.NORMAL_CLOSURE, "").join();
    }

    /** Waits for the server to end the socket; returns its close code, or -1 when the connection just broke. */
    int awaitEnd() {
        return closed.orTimeout(60, TimeUnit.SECONDS).join();
    }

    /** Waits (at most a minute) until {@code channel} holds {@code text}; returns whether it does. */
    boolean awaitChannel(int channel, String text) throws InterruptedException {
        for (int i = 0; i < 6000; i++) {
            if (channel(channel).contains(text)) {
                return true;
            }
            Thread.sleep(10);
        }
        return false;
    }

    /** What arrived on {@code channel}, as text. */
    synchronized String channel(int channel) {
        return channels[channel].toString(StandardCharsets.UTF_8);
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        webSocket.request(1);
    }

    @Override
    public synchronized CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        partial.write(bytes, 0, bytes.length);
        if (last) {
            byte[] msg = partial.toByteArray();
            partial = new ByteArrayOutputStream();
            if (msg.length > 0) {
                channels[msg[0] & 0xff].write(msg, 1, msg.length - 1);
            }
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        closed.complete(statusCode);
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        closed.complete(-1);
    }
}
