package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The code interpreter of a {@link FakeSandbox}, written from e2b-dev/code-interpreter's server: {@code /contexts}
 * (one python process per context, {@code fake_kernel.py}, working in the context's directory) and {@code /execute},
 * answered with the kernel's items as newline-delimited JSON plus keepalives, ending with end_of_execution; 400 for
 * both a context and a language, 404 (plain text) for an unknown context. A client that disconnects during a cell gets
 * the cell interrupted (SIGINT), as the server interrupts its kernel. Keepalives come every second here (the server
 * sends one every 5 s): only how soon a disconnect is noticed differs.
 */
final class FakeInterpreter {

    private static final class Context {
        final String id;
        final String cwd;
        final Process kernel;
        final BufferedReader lines;
        final OutputStream in;

        Context(String id, String cwd, Process kernel) {
            this.id = id;
            this.cwd = cwd;
            this.kernel = kernel;
            this.lines = new BufferedReader(new InputStreamReader(kernel.getInputStream(), StandardCharsets.UTF_8));
            this.in = kernel.getOutputStream();
        }
    }

    private static Path script;
    private final FakeSandbox sandbox;
    private final Map<String, Context> contexts = new ConcurrentHashMap<>();
    final AtomicInteger interrupts = new AtomicInteger();

    FakeInterpreter(FakeSandbox sandbox) {
        this.sandbox = sandbox;
    }

    private static synchronized Path script() throws IOException {
        if (script == null) {
            Path p = Files.createTempFile("fake_kernel", ".py");
            try (InputStream in = FakeInterpreter.class.getResourceAsStream("fake_kernel.py")) {
                Files.write(p, in.readAllBytes());
            }
            p.toFile().deleteOnExit();
            script = p;
        }
        return script;
    }

    void destroy() {
        contexts.values().forEach(c -> c.kernel.destroyForcibly());
        contexts.clear();
    }

    int contexts() {
        return contexts.size();
    }

    void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        if (method.equals("POST") && path.equals("/contexts")) {
            JsonNode req = FakeE2b.body(ex);
            Context c = start(UUID.randomUUID().toString(), req.path("cwd").asText("/home/user"));
            ObjectNode n = FakeE2b.object();
            n.put("id", c.id);
            n.put("language", "python");
            n.put("cwd", c.cwd);
            FakeE2b.json(ex, 200, FakeE2b.JSON.writeValueAsString(n));
        } else if (method.equals("POST") && path.equals("/execute")) {
            execute(ex);
        } else if (method.equals("POST") && path.matches("/contexts/[^/]+/restart")) {
            Context c = contexts.remove(path.split("/")[2]);
            if (c == null) {
                FakeE2b.send(ex, 404, "text/plain", ("Context " + path.split("/")[2] + " not found").getBytes());
                return;
            }
            c.kernel.destroyForcibly();
            start(c.id, c.cwd);
            FakeE2b.json(ex, 200, "null");
        } else if (method.equals("DELETE") && path.matches("/contexts/[^/]+")) {
            Context c = contexts.remove(path.split("/")[2]);
            if (c != null) {
                c.kernel.destroyForcibly();
            }
            FakeE2b.json(ex, 200, "null");
        } else if (path.equals("/health")) {
            FakeE2b.json(ex, 200, "\"OK\"");
        } else {
            FakeE2b.send(ex, 404, "application/json", "{\"detail\":\"Not Found\"}".getBytes());
        }
    }

    private Context start(String id, String cwd) throws IOException {
        ProcessBuilder pb = new ProcessBuilder("/usr/bin/python3", "-u", script().toString())
                .directory(Path.of(cwd).toFile()).redirectError(ProcessBuilder.Redirect.DISCARD);
        // The kernel sees the VM's environment (the template's and the sandbox's variables), never this JVM's.
        pb.environment().clear();
        pb.environment().putAll(sandbox.baseEnvironment("user"));
        Context c = new Context(id, cwd, pb.start());
        contexts.put(id, c);
        return c;
    }

    private void execute(HttpExchange ex) throws IOException {
        JsonNode req = FakeE2b.body(ex);
        String ctx = req.hasNonNull("context_id") ? req.get("context_id").asText() : null;
        if (ctx != null && req.hasNonNull("language")) {
            FakeE2b.send(ex, 400, "text/plain; charset=utf-8", "Only one of context_id or language can be provided"
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        Context c = ctx == null ? null : contexts.get(ctx);
        if (c == null) {
            FakeE2b.send(ex, 404, "text/plain; charset=utf-8", ("Context " + ctx + " not found")
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        synchronized (c) {
            ObjectNode line = FakeE2b.object();
            line.put("code", req.path("code").asText());
            line.set("env", req.path("env_vars"));
            c.in.write((FakeE2b.JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8));
            c.in.flush();
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            boolean connected = true;
            java.util.concurrent.BlockingQueue<String> items = new java.util.concurrent.LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try {
                    String l;
                    while ((l = c.lines.readLine()) != null) {
                        items.add(l);
                        if (l.contains("\"end_of_execution\"")) {
                            return;
                        }
                    }
                    items.add("");
                } catch (IOException e) {
                    items.add("");
                }
            }, "fake-interpreter-reader");
            reader.setDaemon(true);
            reader.start();
            while (true) {
                String l;
                try {
                    l = items.poll(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (sandbox.envd == null) {
                    return;
                }
                if (l != null && l.isEmpty()) {
                    return; // the kernel died: the server would report the lost connection
                }
                String send = l == null ? "{\"type\": \"keepalive\"}" : l;
                if (connected) {
                    try {
                        out.write((send + "\n").getBytes(StandardCharsets.UTF_8));
                        out.flush();
                    } catch (IOException gone) {
                        // The client went away: interrupt the kernel, then let the cell finish unheard.
                        connected = false;
                        interrupts.incrementAndGet();
                        ProcessHandle.of(c.kernel.pid()).ifPresent(h -> {
                            try {
                                new ProcessBuilder("kill", "-INT", Long.toString(h.pid())).start().waitFor();
                            } catch (IOException | InterruptedException ignored) {
                                // The kernel is gone.
                            }
                        });
                    }
                }
                if (l != null && l.contains("\"end_of_execution\"")) {
                    return;
                }
            }
        }
    }
}
