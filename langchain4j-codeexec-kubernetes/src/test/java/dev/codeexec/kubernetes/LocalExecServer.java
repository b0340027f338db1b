package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted API server for exec tests: fabric8's mock web server with a dispatcher that answers
 * {@code pods/{pod}/exec} with a websocket and runs the command <em>on this host</em> (a local process), speaking the
 * channel protocol v5 or v4 like a kubelet would. Pod {@code gone} answers 404, pod {@code forbidden} 403 whatever
 * the protocol; with {@link #v4Only} a v5 offer is refused with 403 and an empty body, as the API server's
 * {@code wsstream} handshake does. {@link #breakNext} closes the next socket without a status after the first
 * stdout frame of its command. Given a {@link FakePod}, the commands run in it instead, entered as a kubelet enters a
 * container (for the pod scripts, which know a run's wrapper as the root of an exec). Test code only: it trusts its
 * commands.
 */
final class LocalExecServer implements AutoCloseable {

    final MockWebServer server = new MockWebServer();
    final KubernetesClient client;
    volatile boolean v4Only;
    /** The next exec's socket is closed without a status once its command started. */
    final java.util.concurrent.atomic.AtomicBoolean breakNext = new java.util.concurrent.atomic.AtomicBoolean();
    final List<Process> processes = new CopyOnWriteArrayList<>();
    final List<String> protocolsOffered = new CopyOnWriteArrayList<>();
    final List<List<String>> commands = new CopyOnWriteArrayList<>();
    final AtomicInteger upgrades = new AtomicInteger();
    private final FakePod pod;

    LocalExecServer() {
        this(null);
    }

    /** A server whose commands run in {@code pod}, or on this host when null. */
    LocalExecServer(FakePod pod) {
        this.pod = pod;
        server.setDispatcher(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest r) {
                return answer(r);
            }
        });
        server.start();
        client = new KubernetesClientBuilder().withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(new ConfigBuilder().withMasterUrl("http://localhost:" + server.getPort())
                        .withRequestRetryBackoffLimit(0).build()).build();
    }

    PodExec podExec() {
        return new PodExec(client, "ns");
    }

    private MockResponse answer(RecordedRequest r) {
        String path = r.getPath();
        String offered = String.valueOf(r.getHeader("Sec-WebSocket-Protocol"));
        protocolsOffered.add(offered);
        if (!path.startsWith("/api/v1/namespaces/ns/pods/") || !path.contains("/exec?")) {
            return new MockResponse().setResponseCode(404);
        }
        String pod = path.substring("/api/v1/namespaces/ns/pods/".length(), path.indexOf("/exec?"));
        if (pod.equals("gone")) {
            return new MockResponse().setResponseCode(404).setBody("{\"kind\":\"Status\",\"status\":\"Failure\","
                    + "\"reason\":\"NotFound\",\"code\":404}");
        }
        if (pod.equals("forbidden")) {
            return new MockResponse().setResponseCode(403).setBody("{\"kind\":\"Status\",\"status\":\"Failure\","
                    + "\"reason\":\"Forbidden\",\"code\":403}");
        }
        boolean v5 = offered.contains("v5.channel.k8s.io");
        if (v5 && v4Only) {
            return new MockResponse().setResponseCode(403);
        }
        List<String> argv = new ArrayList<>();
        boolean stdin = false;
        for (String kv : path.substring(path.indexOf('?') + 1).split("&")) {
            int eq = kv.indexOf('=');
            String k = kv.substring(0, eq);
            String v = URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            if (k.equals("command")) {
                argv.add(v);
            } else if (k.equals("stdin")) {
                stdin = v.equals("true");
            }
        }
        commands.add(argv);
        upgrades.incrementAndGet();
        Exec exec = new Exec(argv, stdin, v5);
        exec.start();
        return new MockResponse().withWebSocketUpgrade(exec);
    }

    /** One exec: a local process and its three streams over the socket. */
    private final class Exec extends WebSocketListener {
        final List<String> argv;
        final boolean stdin;
        final boolean v5;
        volatile Process process;

        Exec(List<String> argv, boolean stdin, boolean v5) {
            this.argv = argv;
            this.stdin = stdin;
            this.v5 = v5;
        }

        /** Starts the command before the upgrade completes, so that no early stdin message finds no process. */
        void start() {
            ProcessBuilder pb = new ProcessBuilder(argv);
            if (!stdin) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            }
            try {
                if (pod == null) {
                    process = pb.start();
                } else {
                    process = pod.start(argv);
                    if (!stdin) {
                        process.getOutputStream().close();
                    }
                }
            } catch (IOException e) {
                failure = e.getMessage().replace('"', '\'');
            }
        }

        volatile String failure;

        @Override
        public void onOpen(WebSocket ws, io.fabric8.mockwebserver.http.Response response) {
            Process p = process;
            if (p == null) {
                ws.send(frame(3, ("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"InternalError\","
                        + "\"message\":\"exec failed: " + failure + "\"}").getBytes(StandardCharsets.UTF_8)));
                ws.close(1000, "");
                return;
            }
            processes.add(p);
            boolean broken = breakNext.compareAndSet(true, false);
            Thread out = pump(p.getInputStream(), 1, ws, broken);
            Thread err = pump(p.getErrorStream(), 2, ws, false);
            if (broken) {
                return;
            }
            Thread t = new Thread(() -> {
                try {
                    int code = p.waitFor();
                    out.join();
                    err.join();
                    String st = code == 0 ? "{\"kind\":\"Status\",\"status\":\"Success\"}"
                            : "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
                            + "\"message\":\"command terminated with non-zero exit code\",\"details\":{\"causes\":"
                            + "[{\"reason\":\"ExitCode\",\"message\":\"" + code + "\"}]}}";
                    ws.send(frame(3, st.getBytes(StandardCharsets.UTF_8)));
                    ws.close(1000, "");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    // The server was shut down first.
                }
            }, "local-exec-wait");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void onMessage(WebSocket ws, byte[] bytes) {
            Process p = process;
            if (p == null || bytes.length == 0) {
                return;
            }
            try {
                OutputStream in = p.getOutputStream();
                if (bytes[0] == 0) {
                    in.write(bytes, 1, bytes.length - 1);
                    in.flush();
                } else if ((bytes[0] & 0xff) == 255 && v5 && bytes.length > 1 && bytes[1] == 0) {
                    in.close();
                }
            } catch (IOException e) {
                // The process ended: its stdin is gone.
            }
        }
    }

    /** Copies a stream into frames; {@code breakAfterFirst}: closes the socket without a status after one. */
    private static Thread pump(InputStream in, int channel, WebSocket ws, boolean breakAfterFirst) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) > 0; ) {
                    byte[] f = new byte[n];
                    System.arraycopy(buf, 0, f, 0, n);
                    ws.send(frame(channel, f));
                    if (breakAfterFirst) {
                        ws.close(1011, "broken");
                        return;
                    }
                }
            } catch (IOException | RuntimeException e) {
                // The process's stream closed.
            }
        }, "local-exec-pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    static byte[] frame(int channel, byte[] payload) {
        byte[] f = new byte[payload.length + 1];
        f[0] = (byte) channel;
        System.arraycopy(payload, 0, f, 1, payload.length);
        return f;
    }

    @Override
    public void close() {
        processes.forEach(Process::destroyForcibly);
        client.close();
        server.shutdown();
    }
}
