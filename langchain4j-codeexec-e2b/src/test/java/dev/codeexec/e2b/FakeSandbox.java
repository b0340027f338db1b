package dev.codeexec.e2b;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** One sandbox of {@link FakeE2b}: its control-plane state, its envd and its code interpreter. */
final class FakeSandbox {

    final FakeE2b e2b;
    final String id;
    final String template;
    final String token;
    final Map<String, String> metadata;
    /** The sandbox's environment variables ({@code envVars} at creation): envd's processes and the kernels get them. */
    final Map<String, String> envVars;
    final boolean internet;
    final Instant startedAt = Instant.now();
    final FakeEnvd envd;
    final FakeInterpreter interpreter;
    volatile boolean paused;
    private volatile Instant endAt;
    private volatile Duration lastTimeout;

    FakeSandbox(FakeE2b e2b, String id, String template, String token, Map<String, String> metadata,
                Map<String, String> envVars, boolean internet, Duration timeout) {
        this.e2b = e2b;
        this.id = id;
        this.template = template;
        this.token = token;
        this.metadata = Map.copyOf(metadata);
        this.envVars = Map.copyOf(envVars);
        this.internet = internet;
        this.endAt = Instant.now().plus(timeout);
        this.lastTimeout = timeout;
        this.envd = new FakeEnvd(this);
        this.interpreter = new FakeInterpreter(this);
    }

    Instant endAt() {
        return endAt;
    }

    /** POST /timeout: the time to live from now, replacing the previous one. */
    void timeout(Duration d) {
        lastTimeout = d;
        endAt = Instant.now().plus(d);
    }

    /** POST /connect: extends, never shortens. */
    void extend(Duration d) {
        Instant e = Instant.now().plus(d);
        if (e.isAfter(endAt)) {
            endAt = e;
        }
    }

    Duration lastTimeout() {
        return lastTimeout;
    }

    /**
     * The environment a program of the sandbox starts with, as in E2B's VM: a minimal one of its own plus the
     * sandbox's variables; nothing of this test JVM's environment.
     */
    Map<String, String> baseEnvironment(String user) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("HOME", user.equals("root") ? "/root" : "/home/" + user);
        env.put("USER", user);
        env.put("LOGNAME", user);
        env.putAll(envVars);
        return env;
    }

    void used() {
        // E2B counts traffic as activity only with auto-pause; the timeout is what the client sets.
    }

    void destroy() {
        envd.destroy();
        interpreter.destroy();
    }

    String info() {
        ObjectNode n = FakeE2b.object();
        n.put("templateID", template);
        n.put("sandboxID", id);
        n.put("alias", template);
        n.put("clientID", "fakeclient");
        n.put("envdVersion", "0.2.4");
        if (token != null) {
            n.put("envdAccessToken", token);
        }
        n.putNull("trafficAccessToken");
        n.putNull("domain");
        return write(n);
    }

    String detail() {
        ObjectNode n = FakeE2b.object();
        n.put("templateID", template);
        n.put("sandboxID", id);
        n.put("alias", template);
        n.put("clientID", "fakeclient");
        n.put("startedAt", startedAt.toString());
        n.put("endAt", endAt.toString());
        n.put("envdVersion", "0.2.4");
        n.put("cpuCount", 2);
        n.put("memoryMB", 512);
        n.put("diskSizeMB", 1024);
        ObjectNode m = n.putObject("metadata");
        metadata.forEach(m::put);
        n.put("state", paused ? "paused" : "running");
        n.put("allowInternetAccess", internet);
        return write(n);
    }

    private static String write(ObjectNode n) {
        try {
            return FakeE2b.JSON.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
