package dev.codeexec.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.WorkspaceGoneException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.WebSocket;
import io.fabric8.kubernetes.client.http.WebSocketHandshakeException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One exec of the {@code pods/exec} subresource over the websocket channel protocol, on fabric8's own HTTP client (so
 * every authentication, TLS and proxy setting of the user's kubeconfig applies). fabric8's exec speaks only protocol
 * v4 and cannot end a program's stdin; this class speaks v5 too, where {@code [255, 0]} half-closes stdin.
 *
 * <p>Frames are binary messages whose first byte is the channel: 0 stdin, 1 stdout, 2 stderr, 3 the status (a
 * {@code metav1.Status}), 255 close. The outcome is {@link #exit()}: the exit status from channel 3, or an
 * {@link ExecStatusException} for a failure without an exit code (the command was not found, the container is gone),
 * or a {@link BackendUnavailableException} when the socket closed or broke with no status: the outcome is unknown,
 * never exit 0. {@link #closed()} completes when the socket closed or {@link #close()} was called; no output reaches
 * the {@link Receiver} after it completed (frames that arrive once {@link #close()} began are dropped).
 *
 * <p>Thread roles: {@link #open} runs on the caller's thread and waits for the upgrade. The client's websocket thread
 * decodes frames, hands output to the {@link Receiver} and completes the futures; it never waits for anything and
 * asks for the next message ({@link WebSocket#request()}) after each. {@link #send} may be called from several writer
 * threads (the run's preamble, the core's stdin thread, stdin's end); one lock, held only from a writer's look at the
 * send queue to its send, makes them take turns, and a writer waits (never on the websocket thread, never holding the
 * lock) while a previous message is still being sent. {@link #close()} may be called from any thread. A second lock,
 * {@code deliveryLock}, is held by the websocket thread while it hands one frame to the receiver (which must not
 * block) and by whoever ends the socket while it marks it ended, before the futures complete (outside the lock), so
 * that {@link #closed()} never completes in the middle of a delivery: a {@link #close()} from another thread waits at
 * most for the frame being delivered. No
 * lock is held while the far side is waited for.
 */
final class ExecSocket {

    /** The channel protocols this client speaks, best first. */
    enum Protocol {
        /** Adds the close message: stdin can be ended. Kubernetes 1.30 on by default (1.29 behind a gate). */
        V5("v5.channel.k8s.io"),
        /** Status as {@code metav1.Status} on channel 3; stdin cannot be ended but by closing the socket. */
        V4("v4.channel.k8s.io");

        final String name;

        Protocol(String name) {
            this.name = name;
        }

        /** Whether a program's stdin can be ended while its output still flows. */
        boolean supportsStdinClose() {
            return this == V5;
        }
    }

    /** Receives output on the websocket's thread: must not block, must copy what it keeps. */
    @FunctionalInterface
    interface Receiver {
        void output(StdStream stream, byte[] bytes, int offset, int length);
    }

    /**
     * The server refused the subprotocol offered. The API server's handshake ({@code wsstream}) answers an offer it
     * does not support with {@code 403} and an empty body, the same status as an RBAC refusal; the caller tells them
     * apart by offering v4 next: a server that refuses that too refused the user.
     */
    static final class UpgradeRefused extends RuntimeException {
        final int code;

        UpgradeRefused(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /**
     * A {@code Failure} status without an exit code: the command did not run (not found, container gone...). Nothing
     * ran, so it is a {@link BackendUnavailableException} carrying the API server's reason and message.
     */
    static final class ExecStatusException extends BackendUnavailableException {
        final String reason;

        ExecStatusException(String reason, String message) {
            super(message);
            this.reason = reason;
        }
    }

    /**
     * Most bytes of one stdin frame's payload: with its channel byte a message is at most 64 KiB, the default frame
     * limit of Netty's and Vert.x's websocket servers (a proxy or gateway in front of the API server may be one). The
     * API server itself takes far larger messages; one byte more here made such a server close the stream without an
     * exit status as soon as a write or an import crossed 64 KiB.
     */
    static final int MAX_FRAME = 64 * 1024 - 1;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte STDIN = 0;
    private static final byte STATUS = 3;
    private static final byte CLOSE = (byte) 255;

    private final Protocol protocol;
    private final String what;
    private final Receiver receiver;
    private final boolean holdStdout;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile WebSocket socket;

    /** Held by a writer from its look at the send queue to its send ({@link #sendMessage}). */
    private final Object sendLock = new Object();

    /** Held while one frame is delivered, and while the socket is ended (see the class). */
    private final Object deliveryLock = new Object();

    /** Set under {@link #deliveryLock} when the socket ends: later frames are dropped. */
    private boolean ended;

    private ExecSocket(Protocol protocol, String what, Receiver receiver, boolean holdStdout) {
        this.protocol = protocol;
        this.what = what;
        this.receiver = receiver;
        this.holdStdout = holdStdout;
    }

    /**
     * The exec URI of {@code argv} in the workspace container of {@code pod}.
     *
     * @param master the API server's base URL (the client's master URL)
     */
    static URI uri(String master, String namespace, String pod, List<String> argv, boolean stdin) {
        StringBuilder b = new StringBuilder(master.endsWith("/") ? master : master + "/");
        b.append("api/v1/namespaces/").append(enc(namespace)).append("/pods/").append(enc(pod)).append("/exec?");
        for (String a : argv) {
            b.append("command=").append(enc(a)).append('&');
        }
        b.append("container=").append(enc(PodLayout.CONTAINER));
        b.append(stdin ? "&stdin=true" : "").append("&stdout=true&stderr=true");
        return URI.create(b.toString());
    }

    private static String enc(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Opens the exec and returns once the upgrade succeeded; the program then runs.
     *
     * @param what       names the exec in messages (the pod), never a host path
     * @param holdStdout when true, the next message is asked for only when the receiver calls {@link #request()}
     *                   after a stdout chunk (flow control by a consumer on another thread); otherwise at once
     * @param timeout    how long the upgrade may take
     * @throws UpgradeRefused               the server answered the upgrade with 400 or 403 (see the class)
     * @throws WorkspaceGoneException       404: the pod (or its namespace) does not exist
     * @throws BackendUnavailableException  any other failure: nothing ran
     */
    static ExecSocket open(HttpClient http, URI uri, Protocol protocol, String what, Receiver receiver,
                           boolean holdStdout, Duration timeout) {
        ExecSocket s = new ExecSocket(protocol, what, receiver, holdStdout);
        CompletableFuture<WebSocket> f = http.newWebSocketBuilder().subprotocol(protocol.name).uri(uri)
                .connectTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).buildAsync(s.new Listener());
        try {
            s.socket = f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return s;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.cancel(true);
            throw new BackendUnavailableException("interrupted while starting a command in pod " + what, e);
        } catch (TimeoutException e) {
            f.thenAccept(ws -> ws.sendClose(1000, "timeout")); // an upgrade that completes late is closed
            throw new BackendUnavailableException("the API server did not open an exec in pod " + what + " within "
                    + timeout.toMillis() + " ms", e);
        } catch (ExecutionException e) {
            throw translate(e.getCause(), what, uri);
        }
    }

    private static RuntimeException translate(Throwable t, String what, URI uri) {
        Throwable c = t;
        while (c != null && !(c instanceof WebSocketHandshakeException)) {
            c = c.getCause();
        }
        String endpoint = uri.getScheme() + "://" + uri.getAuthority() + uri.getPath();
        if (c != null) {
            int code = ((WebSocketHandshakeException) c).getResponse().code();
            if (code == 404) {
                return new WorkspaceGoneException("pod " + what + " no longer exists (404 from the API server)", c);
            }
            if (code == 403 || code == 400) {
                return new UpgradeRefused(code, "the API server refused the exec in pod " + what + " (" + code + ")");
            }
            return new BackendUnavailableException("the API server answered " + code + " to an exec at " + endpoint,
                    c);
        }
        return new BackendUnavailableException("could not open an exec at " + endpoint + ": " + t, t);
    }

    /** Asks for the next message after a held stdout chunk was consumed (see {@code holdStdout}). */
    void request() {
        socket.request();
    }

    /** The protocol this socket speaks. */
    Protocol protocol() {
        return protocol;
    }

    /** The exit status; completes exceptionally when there is none (see the class). */
    CompletableFuture<Integer> exit() {
        return exit;
    }

    /** Completes when the socket closed (normally or not), after every output frame was delivered. */
    CompletableFuture<Void> closed() {
        return closed;
    }

    /**
     * Sends stdin bytes as channel-0 frames of at most {@link #MAX_FRAME} bytes, one message in flight at a time.
     *
     * @throws IOException the socket closed (the program ended) or the wait was interrupted
     */
    void send(byte[] b, int off, int len) throws IOException {
        for (int i = 0; i < len; i += MAX_FRAME) {
            int n = Math.min(MAX_FRAME, len - i);
            byte[] frame = new byte[n + 1];
            frame[0] = STDIN;
            System.arraycopy(b, off + i, frame, 1, n);
            sendMessage(frame);
        }
    }

    /**
     * Ends the program's stdin ({@code [255, 0]}). Only under {@link Protocol#V5}.
     *
     * @throws IOException                   the socket closed
     * @throws UnsupportedOperationException under v4, which has no such message
     */
    void closeStdin() throws IOException {
        if (!protocol.supportsStdinClose()) {
            throw new UnsupportedOperationException("protocol v4 cannot end stdin");
        }
        sendMessage(new byte[] {CLOSE, STDIN});
    }

    /**
     * Sends one message once the previous one left: the JDK's websocket takes one send at a time and fails another
     * at once (fabric8 then answers {@code false} and logs nothing), so a refused send is tried again until it is
     * taken or the socket closed. This also bounds the stdin queued in the client to one frame. Waits on the
     * writer's thread only.
     */
    private void sendMessage(byte[] frame) throws IOException {
        long pause = 1;
        while (true) {
            if (closed.isDone()) {
                throw new IOException("the exec's stream is closed");
            }
            // The check and the send are one step for every writer (the caller's preamble, the core's stdin thread,
            // the close message): two threads that both saw an empty queue would both send, and the JDK client
            // drops the second message while the first is pending.
            synchronized (sendLock) {
                if (socket.queueSize() == 0 && socket.send(ByteBuffer.wrap(frame))) {
                    return;
                }
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while writing stdin");
            }
            pause = Math.min(pause * 2, 20);
        }
    }

    /**
     * Closes the socket from any thread; a program still running gets no status, so {@link #exit()} fails (unknown)
     * unless the status came first. Does not wait for the far side; waits at most for the frame being delivered, and
     * no output is delivered after it returns.
     */
    void close() {
        end(null); // first: from here on, frames are dropped
        WebSocket ws = socket;
        if (ws != null) {
            ws.sendClose(1000, "closed by the client");
        }
    }

    private void end(Throwable cause) {
        synchronized (deliveryLock) {
            ended = true; // waits for the frame being delivered; none is delivered after
        }
        // Completed outside the lock: their callbacks (the run's end) may take other locks or close this socket.
        exit.completeExceptionally(new BackendUnavailableException("the exec stream of pod " + what
                + " ended without an exit status", cause));
        closed.complete(null);
    }

    private void status(String json) {
        try {
            JsonNode st = JSON.readTree(json);
            String status = st.path("status").asText("");
            if ("Success".equals(status)) {
                exit.complete(0);
                return;
            }
            for (JsonNode cause : st.path("details").path("causes")) {
                if ("ExitCode".equals(cause.path("reason").asText())) {
                    exit.complete(Integer.parseInt(cause.path("message").asText().trim()));
                    return;
                }
            }
            exit.completeExceptionally(new ExecStatusException(st.path("reason").asText(""),
                    st.path("message").asText("the exec failed")));
        } catch (IOException | RuntimeException e) {
            exit.completeExceptionally(new BackendUnavailableException("unreadable exec status from pod " + what,
                    e));
        }
    }

    /** Runs on the client's websocket thread only. */
    private final class Listener implements WebSocket.Listener {

        @Override
        public void onOpen(WebSocket ws) {
            socket = ws;
        }

        @Override
        public void onMessage(WebSocket ws, ByteBuffer bytes) {
            boolean held = false;
            try {
                if (bytes.remaining() > 0) {
                    byte ch = bytes.get();
                    byte[] b = new byte[bytes.remaining()];
                    bytes.get(b);
                    if ((ch == 1 || ch == 2) && b.length > 0) {
                        synchronized (deliveryLock) {
                            if (ended) {
                                return; // closed by the client: what still comes is dropped
                            }
                            receiver.output(ch == 1 ? StdStream.STDOUT : StdStream.STDERR, b, 0, b.length);
                            held = holdStdout && ch == 1;
                        }
                    } else if (ch == STATUS && b.length > 0) {
                        status(new String(b, StandardCharsets.UTF_8)); // after an end: exit is already complete
                    }
                }
            } finally {
                if (!held) {
                    ws.request();
                }
            }
        }

        @Override
        public void onMessage(WebSocket ws, String text) {
            // The binary protocols never send text; ignore it but keep the flow going.
            ws.request();
        }

        @Override
        public void onClose(WebSocket ws, int code, String reason) {
            end(null);
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            end(error);
        }
    }
}
