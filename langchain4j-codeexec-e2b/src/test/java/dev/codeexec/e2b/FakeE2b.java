package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An E2B that runs on this host, for the tests that need real behaviour behind the wire format: the control plane
 * (create, get, list, connect, timeout, pause, kill, and the expiry of sandboxes whose timeout passed) and, per
 * sandbox, an envd ({@link FakeEnvd}) that really starts the programs it is asked to start and really reads and
 * writes files, and a code interpreter ({@link FakeInterpreter}) that runs python cells in a python process per
 * context. All answer in the wire format {@link E2bWireTest} pins (Connect envelopes, proto3 JSON, the API's JSON,
 * the proxy's "not found", NDJSON).
 *
 * <p>What it models rather than reproduces: every sandbox shares this host's file system and processes (the engine
 * is pointed at a base directory under the test's temporary directory, and runs as root so that its PID namespaces
 * work); users are not switched (tests use root); the sandbox proxy is this one server (header routing, as with
 * {@code E2B_SANDBOX_URL}). Listens on loopback only; every process it starts is killed when it closes.
 *
 * <p>Public, and shipped in this module's test jar, for the samples' and the Spring Boot starter's tests; the rest of
 * its API stays package-private.
 */
public final class FakeE2b implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    public static final String API_KEY = "e2b_fake_key";

    /** One request as the server saw it. */
    record Request(String method, String path, String sandboxId, String port, String remote) {
    }

    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-e2b");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService reaper = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fake-e2b-reaper");
        t.setDaemon(true);
        return t;
    });
    final Path hostBase;
    private final Map<String, FakeSandbox> sandboxes = new ConcurrentHashMap<>();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final Set<String> killed = ConcurrentHashMap.newKeySet();
    private final List<String> created = new CopyOnWriteArrayList<>();
    volatile String failSetupWith;

    /** @param hostBase the base directory the engine keeps its workspaces in (its {@code baseDir}) */
    public FakeE2b(Path hostBase) throws IOException {
        this.hostBase = hostBase;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
        reaper.scheduleWithFixedDelay(this::expire, 200, 200, TimeUnit.MILLISECONDS);
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** An engine builder pointed at this fake: its API and sandbox URLs, root, the workspaces under the base. */
    public E2bEngine.Builder engine() {
        return E2bEngine.builder().e2bVariables(Map.of()).apiKey(API_KEY).apiUrl(url()).sandboxUrl(url())
                .retries(3, Duration.ofMillis(5)).user("root").baseDir(hostBase.toString());
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    void clearRequests() {
        requests.clear();
    }

    /** The distinct client connections (remote address and port) that sent requests for {@code sandboxId}. */
    Set<String> connections(String sandboxId) {
        Set<String> out = new java.util.TreeSet<>();
        for (Request r : requests) {
            if (sandboxId.equals(r.sandboxId())) {
                out.add(r.remote());
            }
        }
        return out;
    }

    /** Sandboxes that exist now (running or paused). */
    public Set<String> live() {
        return Set.copyOf(sandboxes.keySet());
    }

    /** Every sandbox ever created, in order. */
    public List<String> created() {
        return List.copyOf(created);
    }

    public Set<String> killed() {
        return Set.copyOf(killed);
    }

    FakeSandbox sandbox(String id) {
        return sandboxes.get(id);
    }

    /** Ends a sandbox behind the engine's back, as its timeout or E2B would: processes die, streams break. */
    void expire(String id) {
        FakeSandbox sb = sandboxes.remove(id);
        if (sb != null) {
            sb.destroy();
        }
    }

    private void expire() {
        Instant now = Instant.now();
        for (FakeSandbox sb : sandboxes.values()) {
            if (sb.endAt().isBefore(now)) {
                expire(sb.id);
            }
        }
    }

    @Override
    public void close() {
        reaper.shutdownNow();
        for (String id : List.copyOf(sandboxes.keySet())) {
            expire(id);
        }
        server.stop(0);
        pool.shutdownNow();
    }

    // ------------------------------------------------------------------ routing

    private void handle(HttpExchange ex) throws IOException {
        String sandboxId = ex.getRequestHeaders().getFirst("E2b-Sandbox-Id");
        String port = ex.getRequestHeaders().getFirst("E2b-Sandbox-Port");
        requests.add(new Request(ex.getRequestMethod(), ex.getRequestURI().getPath(), sandboxId, port,
                ex.getRemoteAddress().toString()));
        boolean abort = false;
        try {
            if (sandboxId == null) {
                controlPlane(ex);
                return;
            }
            FakeSandbox sb = sandboxes.get(sandboxId);
            if (sb == null) {
                // The sandbox proxy's answer for a sandbox that does not exist.
                send(ex, 502, "application/json; charset=utf-8", ("{\"sandboxId\":\"" + sandboxId
                        + "\",\"message\":\"The sandbox was not found\",\"code\":502}").getBytes(StandardCharsets.UTF_8));
                return;
            }
            if (sb.token != null && !sb.token.equals(ex.getRequestHeaders().getFirst("X-Access-Token"))) {
                send(ex, 401, "application/json; charset=utf-8", ("{\"code\":401,\"message\":\"unauthorized access, "
                        + "please provide a valid access token or method signing if supported\"}\n")
                        .getBytes(StandardCharsets.UTF_8));
                return;
            }
            sb.used();
            if ("49999".equals(port)) {
                sb.interpreter.handle(ex);
            } else if ("49983".equals(port)) {
                sb.envd.handle(ex);
            } else {
                send(ex, 502, "application/json", ("{\"sandboxId\":\"" + sandboxId + "\",\"message\":\"The sandbox "
                        + "is running but port is not open\",\"port\":" + port + ",\"code\":502}").getBytes());
            }
        } catch (FakeEnvd.Abort a) {
            // The server drops the connection of an exchange whose handler throws: the answer breaks off.
            abort = true;
            throw a;
        } finally {
            if (!abort) {
                ex.close();
            }
        }
    }

    private void controlPlane(HttpExchange ex) throws IOException {
        if (!API_KEY.equals(ex.getRequestHeaders().getFirst("X-API-Key"))) {
            json(ex, 401, "{\"code\":401,\"message\":\"Invalid API key, it must start with 'e2b_' prefix\"}");
            return;
        }
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        String[] seg = path.split("/");
        if (method.equals("POST") && path.equals("/sandboxes")) {
            create(ex);
        } else if (method.equals("GET") && path.equals("/v2/sandboxes")) {
            list(ex);
        } else if (seg.length >= 3 && seg[1].equals("sandboxes")) {
            FakeSandbox sb = sandboxes.get(seg[2]);
            if (sb == null) {
                json(ex, 404, "{\"code\":404,\"message\":\"sandbox \\\"" + seg[2] + "\\\" doesn't exist or you don't "
                        + "have access to it\"}");
                return;
            }
            String op = seg.length > 3 ? seg[3] : "";
            JsonNode body = body(ex);
            switch (method + " " + op) {
                case "GET " -> json(ex, 200, sb.detail());
                case "DELETE " -> {
                    killed.add(sb.id);
                    expire(sb.id);
                    send(ex, 204, null, new byte[0]);
                }
                case "POST timeout" -> {
                    sb.timeout(Duration.ofSeconds(body.path("timeout").asLong()));
                    send(ex, 204, null, new byte[0]);
                }
                case "POST connect" -> {
                    boolean wasPaused = sb.paused;
                    sb.paused = false;
                    sb.extend(Duration.ofSeconds(body.path("timeout").asLong()));
                    json(ex, wasPaused ? 201 : 200, sb.info());
                }
                case "POST pause" -> {
                    if (sb.paused) {
                        json(ex, 409, "{\"code\":409,\"message\":\"Sandbox " + sb.id + " is already paused\"}");
                    } else {
                        sb.paused = true;
                        send(ex, 204, null, new byte[0]);
                    }
                }
                default -> json(ex, 404, "{\"code\":404,\"message\":\"not found\"}");
            }
        } else {
            json(ex, 404, "{\"code\":404,\"message\":\"not found\"}");
        }
    }

    private void create(HttpExchange ex) throws IOException {
        JsonNode body = body(ex);
        String template = body.path("templateID").asText();
        if (template.equals("no-such-template")) {
            json(ex, 404, "{\"code\":404,\"message\":\"template '" + template + "' not found\"}");
            return;
        }
        String id = randomId();
        Map<String, String> meta = new LinkedHashMap<>();
        body.path("metadata").properties().forEach(e -> meta.put(e.getKey(), e.getValue().asText()));
        Map<String, String> envVars = new LinkedHashMap<>();
        body.path("envVars").properties().forEach(e -> envVars.put(e.getKey(), e.getValue().asText()));
        FakeSandbox sb = new FakeSandbox(this, id, template, body.path("secure").asBoolean(false) ? randomId() : null,
                meta, envVars, body.path("allow_internet_access").asBoolean(true),
                Duration.ofSeconds(body.path("timeout").asLong(15)));
        sandboxes.put(id, sb);
        created.add(id);
        json(ex, 201, sb.info());
    }

    private void list(HttpExchange ex) throws IOException {
        Map<String, String> want = new LinkedHashMap<>();
        String q = ex.getRequestURI().getRawQuery();
        if (q != null) {
            for (String kv : q.split("&")) {
                String[] p = kv.split("=", 2);
                if (p[0].equals("metadata") && p.length == 2) {
                    for (String m : URLDecoder.decode(p[1], StandardCharsets.UTF_8).split("&")) {
                        String[] mp = m.split("=", 2);
                        want.put(URLDecoder.decode(mp[0], StandardCharsets.UTF_8),
                                mp.length > 1 ? URLDecoder.decode(mp[1], StandardCharsets.UTF_8) : "");
                    }
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (FakeSandbox sb : sandboxes.values()) {
            if (sb.metadata.entrySet().containsAll(want.entrySet())) {
                out.add(sb.detail());
            }
        }
        json(ex, 200, "[" + String.join(",", out) + "]");
    }

    private static String randomId() {
        StringBuilder sb = new StringBuilder();
        String chars = "abcdefghijklmnopqrstuvwxyz0123456789";
        for (int i = 0; i < 20; i++) {
            sb.append(chars.charAt(ThreadLocalRandom.current().nextInt(chars.length())));
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ helpers

    static JsonNode body(HttpExchange ex) throws IOException {
        byte[] b = ex.getRequestBody().readAllBytes();
        return b.length == 0 ? JSON.createObjectNode() : JSON.readTree(b);
    }

    static void json(HttpExchange ex, int status, String body) throws IOException {
        send(ex, status, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        if (type != null) {
            ex.getResponseHeaders().set("Content-Type", type);
        }
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        }
    }

    static ObjectNode object() {
        return JSON.createObjectNode();
    }

    static byte[] readAll(InputStream in, int max) throws IOException {
        byte[] b = in.readNBytes(max + 1);
        if (b.length > max) {
            throw new IOException("request body too large for the fake");
        }
        return b;
    }

    static List<String> copy(List<String> l) {
        return Collections.unmodifiableList(new ArrayList<>(l));
    }
}
