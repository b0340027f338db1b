package dev.codeexec.kubernetes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One {@code pods/exec} stream of the fake cluster: runs its argv in a {@link FakePod} and speaks the Kubernetes
 * channel protocol over the upgraded websocket, as the API server and kubelet do. Every message is binary, its first
 * byte the channel: {@code 0} stdin (client to server), {@code 1} stdout, {@code 2} stderr, {@code 3} the final
 * {@code metav1.Status} as JSON, {@code 255} close (v5 only: {@code [255, 0]} half-closes stdin so the process reads
 * EOF; under v4 a 255 message is ignored, as the real server ignores frames for channels it does not have, and stdin
 * only ends with the socket). Output is sent as it comes, one message per read, never buffered to the end. After
 * the status the server closes the socket normally (1000).
 *
 * <p>Statuses are those of the kubelet's {@code remotecommand} server with containerd: exit 0 is
 * {@code {"metadata":{},"status":"Success"}}; another exit is {@code Failure}, reason {@code NonZeroExitCode}, one
 * cause {@code {reason: ExitCode, message: "<n>"}}, message {@code command terminated with non-zero exit code:
 * command '<argv>' exited with <n>}; a command not found in the container is an {@code InternalError} (code 500)
 * with the runtime's {@code executable file not found in $PATH} message and no {@code ExitCode} cause.
 *
 * <p>When the client closes the socket before the end, the process is not killed: a real kubelet ends the stream
 * and the container runtime leaves the exec'd process running (kubernetes/kubernetes#89031, kubectl#1076,
 * runc#3359); its stdin is closed and its output is read and dropped. It dies with its pod. Callers that need it
 * gone kill it themselves, as they would on a cluster. The other way round, a pod deleted (or evicted) during an
 * exec kills the exec's process with the rest of the pod, and the stream ends with exit code 137 (SIGKILL).
 *
 * <p>Threads: the Vert.x event loop calls the listener methods (they never block: stdin bytes are queued for a
 * writer thread); three daemon threads per exec pump stdin, stdout and stderr; the stderr-and-exit thread sends the
 * status. Sends from several threads are ordered by the joins before the status.
 */
final class FakeExecSocket extends WebSocketListener {

    static final String V4 = "v4.channel.k8s.io";
    static final String V5 = "v5.channel.k8s.io";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] EOF = new byte[0];

    /** Whether this stream breaks: the connection dropped after the first output (or at the exit), no status. */
    private final boolean breakMidRun;
    private final FakePod pod;
    private final List<String> argv;
    private final boolean stdin;
    private final boolean stdout;
    private final boolean stderr;
    private final String protocol;
    private final BlockingQueue<byte[]> stdinQueue = new LinkedBlockingQueue<>();
    private final AtomicBoolean clientGone = new AtomicBoolean();
    private final AtomicBoolean broken = new AtomicBoolean();
    private volatile WebSocket socket;

    FakeExecSocket(FakePod pod, List<String> argv, boolean stdin, boolean stdout, boolean stderr, String protocol,
            boolean breakMidRun) {
        this.pod = pod;
        this.argv = List.copyOf(argv);
        this.stdin = stdin;
        this.stdout = stdout;
        this.stderr = stderr;
        this.protocol = protocol;
        this.breakMidRun = breakMidRun;
    }

    @Override
    public void onOpen(WebSocket ws, io.fabric8.mockwebserver.http.Response response) {
        socket = ws;
        if (pod.resolve(argv.get(0)).isEmpty()) {
            finish(notFoundStatus());
            return;
        }
        Process process;
        try {
            process = pod.start(argv);
        } catch (IOException e) {
            finish(internalError("failed to exec in container: " + e.getMessage()));
            return;
        }
        Thread in = daemon("stdin", () -> pumpStdin(process.getOutputStream()));
        Thread out = daemon("stdout", () -> pumpOutput(process.getInputStream(), 1, stdout));
        daemon("stderr-exit", () -> {
            pumpOutput(process.getErrorStream(), 2, stderr);
            try {
                out.join();
                int code = process.waitFor();
                finish(code == 0 ? success() : nonZero(code));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                stdinQueue.add(EOF);
                try {
                    in.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    @Override
    public void onMessage(WebSocket ws, byte[] bytes) {
        if (bytes.length == 0) {
            return;
        }
        int channel = bytes[0] & 0xff;
        if (channel == 0 && stdin) {
            if (bytes.length > 1) {
                stdinQueue.add(Arrays.copyOfRange(bytes, 1, bytes.length));
            }
        } else if (channel == 255 && V5.equals(protocol) && bytes.length > 1 && bytes[1] == 0) {
            stdinQueue.add(EOF);
        }
        // channel 4 (resize) and any other channel: ignored, as by the real server
    }

    @Override
    public void onClosing(WebSocket ws, int code, String reason) {
        clientGone();
    }

    @Override
    public void onClosed(WebSocket ws, int code, String reason) {
        clientGone();
    }

    @Override
    public void onFailure(WebSocket ws, Throwable t, io.fabric8.mockwebserver.http.Response response) {
        clientGone();
    }

    private void clientGone() {
        clientGone.set(true);
        stdinQueue.add(EOF);
    }

    private void pumpStdin(OutputStream to) {
        try (to) {
            if (!stdin) {
                return;
            }
            while (true) {
                byte[] chunk = stdinQueue.take();
                if (chunk == EOF) {
                    return;
                }
                to.write(chunk);
                to.flush();
            }
        } catch (IOException e) {
            // the process closed its stdin or ended; later bytes are dropped, as a pipe would
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void pumpOutput(InputStream from, int channel, boolean wanted) {
        byte[] buf = new byte[16384];
        try (from) {
            int n;
            while ((n = from.read(buf)) >= 0) {
                if (!wanted || clientGone.get() || broken.get()) {
                    continue; // read and dropped: the process must not block on a full pipe
                }
                byte[] msg = new byte[n + 1];
                msg[0] = (byte) channel;
                System.arraycopy(buf, 0, msg, 1, n);
                send(msg);
                if (breakMidRun) {
                    breakConnection();
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    private void finish(Map<String, Object> status) {
        if (clientGone.get() || broken.get()) {
            return;
        }
        if (breakMidRun) {
            breakConnection();
            return;
        }
        try {
            byte[] json = JSON.writeValueAsBytes(status);
            byte[] msg = new byte[json.length + 1];
            msg[0] = 3;
            System.arraycopy(json, 0, msg, 1, json.length);
            send(msg);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        socket.close(1000, "");
    }

    private void send(byte[] msg) {
        if (!socket.send(msg)) {
            clientGone();
        }
    }

    /**
     * Ends the stream without a status, with an error close (1011), as an API server does when its connection to the
     * kubelet breaks. (A TCP connection cut without any close frame is not always noticed by the JDK's WebSocket
     * client; runs are then bounded by their timeout, which closes the socket.)
     */
    private void breakConnection() {
        if (broken.compareAndSet(false, true)) {
            socket.close(1011, "stream broken");
        }
    }

    private static Map<String, Object> success() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("metadata", Map.of());
        s.put("status", "Success");
        return s;
    }

    private Map<String, Object> nonZero(int code) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("metadata", Map.of());
        s.put("status", "Failure");
        s.put("message", "command terminated with non-zero exit code: command '" + String.join(" ", argv)
                + "' exited with " + code);
        s.put("reason", "NonZeroExitCode");
        Map<String, Object> cause = new LinkedHashMap<>();
        cause.put("reason", "ExitCode");
        cause.put("message", Integer.toString(code));
        s.put("details", Map.of("causes", List.of(cause)));
        return s;
    }

    private Map<String, Object> notFoundStatus() {
        String cmd = argv.get(0);
        String why = cmd.contains("/") ? "stat " + cmd + ": no such file or directory"
                : "executable file not found in $PATH";
        return internalError("failed to exec in container: failed to start exec: OCI runtime exec failed: exec "
                + "failed: unable to start container process: exec: \"" + cmd + "\": " + why + ": unknown");
    }

    private static Map<String, Object> internalError(String error) {
        String cause = "error executing command in container: " + error;
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("metadata", Map.of());
        s.put("status", "Failure");
        s.put("message", "Internal error occurred: " + cause);
        s.put("reason", "InternalError");
        s.put("details", Map.of("causes", List.of(Map.of("message", cause))));
        s.put("code", 500);
        return s;
    }

    private static Thread daemon(String what, Runnable r) {
        Thread t = new Thread(r, "fake-exec-" + what);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
