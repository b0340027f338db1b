package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The code interpreter of a {@code code-interpreter} sandbox (port {@value SandboxAddress#INTERPRETER_PORT}, a FastAPI
 * server in front of Jupyter): contexts ({@code POST /contexts}, one Jupyter kernel each, state kept between cells)
 * and executions ({@code POST /execute}, answered with newline-delimited JSON items until
 * {@code {"type": "end_of_execution"}}). Over HTTP/1.1 on purpose: the server interrupts the kernel when the client
 * disconnects, which is how a cell's timeout stops it.
 */
final class CodeInterpreter {

    /** The longest line of an answer (an image's base64 fits): {@value} bytes. */
    static final int MAX_LINE = 64 << 20;

    /** A stream with no line for this long (the server sends a keepalive every 5 s) is broken. */
    static final Duration SILENCE = Duration.ofSeconds(60);

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "codeexec-e2b-interpreter-timer");
        t.setDaemon(true);
        return t;
    });

    private final E2bHttp http;
    private final SandboxAddress address;

    CodeInterpreter(E2bHttp http, SandboxAddress address) {
        this.http = http;
        this.address = address;
    }

    private HttpRequest.Builder request(String path) {
        return address.headers(http.request(address.interpreter(path)), SandboxAddress.INTERPRETER_PORT)
                .header("Content-Type", "application/json");
    }

    /**
     * Creates a Python context (a kernel) working in {@code cwd}.
     *
     * @return its id
     */
    String createContext(String cwd) {
        String what = "create a code interpreter context";
        ObjectNode body = Json.object();
        body.put("cwd", cwd);
        body.put("language", "python");
        E2bHttp.Answer a = http.call(request("/contexts").POST(HttpRequest.BodyPublishers.ofByteArray(
                Json.bytes(body))).build(), E2bHttp.Retry.IF_NOT_SENT, what, Bounded.JSON_BYTES);
        if (a.status() != 200) {
            throw failure(a, what);
        }
        String id = Json.text(Json.parse(a.body(), what), "id");
        if (id == null || id.isBlank()) {
            throw new E2bProtocolException("the answer to '" + what + "' names no context id", a.status(), null);
        }
        return id;
    }

    /** Restarts a context's kernel: its variables are gone. */
    void restartContext(String contextId) {
        String what = "restart a code interpreter context";
        E2bHttp.Answer a = http.call(request("/contexts/" + Envd.enc(contextId) + "/restart")
                .POST(HttpRequest.BodyPublishers.noBody()).build(), E2bHttp.Retry.IF_NOT_SENT, what,
                Bounded.ERROR_BYTES);
        if (!a.ok()) {
            throw failure(a, what);
        }
    }

    /** Removes a context (its kernel stops). */
    void deleteContext(String contextId) {
        String what = "remove a code interpreter context";
        E2bHttp.Answer a = http.call(request("/contexts/" + Envd.enc(contextId)).DELETE().build(),
                E2bHttp.Retry.TRANSIENT, what, Bounded.ERROR_BYTES);
        if (!a.ok() && a.status() != 404) {
            throw failure(a, what);
        }
    }

    private RuntimeException failure(E2bHttp.Answer a, String what) {
        RuntimeException e = E2bErrors.sandbox(a, what, address.sandboxId());
        if (a.status() == 502 && !(e instanceof E2bSandboxGoneException)) {
            return new E2bApiException("sandbox " + address.sandboxId() + " has no code interpreter answering on port "
                    + SandboxAddress.INTERPRETER_PORT + " (is its template a code-interpreter template?); could not "
                    + what, a.status(), "unavailable");
        }
        return e;
    }

    /** How an execution ended. */
    enum End {
        /** {@code end_of_execution} arrived. */
        COMPLETED,
        /** The timeout passed: the connection was closed, and the server interrupted the kernel. */
        TIMED_OUT,
        /** The context does not exist (HTTP 404): the interpreter lost it, or it was removed. */
        CONTEXT_LOST
    }

    /**
     * Executes code in a context and hands each item to {@code onItem} as it arrives ({@code stdout}, {@code stderr},
     * {@code result}, {@code error}, {@code number_of_executions}; keepalives are not handed on).
     *
     * @throws E2bProtocolException when the answer broke off or stayed silent before {@code end_of_execution}
     */
    End execute(String code, String contextId, Map<String, String> env, Duration timeout,
                Consumer<JsonNode> onItem) {
        String what = "execute code";
        ObjectNode body = Json.object();
        body.put("code", code);
        body.put("context_id", contextId);
        ObjectNode vars = body.putObject("env_vars");
        env.forEach(vars::put);
        HttpRequest req = request("/execute").timeout(http.config().requestTimeout())
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))).build();
        HttpResponse<InputStream> r = http.open(req, what);
        if (r.statusCode() != 200) {
            byte[] b;
            try (InputStream in = r.body()) {
                b = in.readNBytes(Bounded.ERROR_BYTES);
            } catch (IOException e) {
                b = new byte[0];
            }
            if (r.statusCode() == 404 && Json.parseOrNull(b) == null) {
                return End.CONTEXT_LOST; // the server's plain "Context ... not found"
            }
            throw failure(new E2bHttp.Answer(r.statusCode(), r.headers(), b, 1), what);
        }
        InputStream in = r.body();
        AtomicBoolean timedOut = new AtomicBoolean();
        AtomicBoolean silent = new AtomicBoolean();
        long[] last = {System.nanoTime()};
        ScheduledFuture<?> deadline = TIMER.schedule(() -> {
            timedOut.set(true);
            Envd.closeQuietly(in);
        }, Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        ScheduledFuture<?> watch = TIMER.scheduleWithFixedDelay(() -> {
            if (System.nanoTime() - last[0] > SILENCE.toNanos()) {
                silent.set(true);
                Envd.closeQuietly(in);
            }
        }, 1, 1, TimeUnit.SECONDS);
        try (BufferedInputStream lines = new BufferedInputStream(in)) {
            byte[] line;
            while ((line = line(lines)) != null) {
                last[0] = System.nanoTime();
                if (line.length == 0) {
                    continue;
                }
                JsonNode item = Json.parse(line, what);
                String type = Json.text(item, "type");
                if ("end_of_execution".equals(type)) {
                    lines.readNBytes(64); // to the end of the body, so the connection can be reused
                    return End.COMPLETED;
                }
                if (!"keepalive".equals(type)) {
                    onItem.accept(item);
                }
            }
            throw new E2bProtocolException("sandbox " + address.sandboxId() + ": the code interpreter's answer ended "
                    + "before end_of_execution", 200, "truncated");
        } catch (IOException e) {
            if (timedOut.get()) {
                return End.TIMED_OUT;
            }
            throw new E2bProtocolException("sandbox " + address.sandboxId() + ": the code interpreter's answer "
                    + (silent.get() ? "stayed silent for " + SILENCE.toSeconds() + " s" : "broke off") + " ("
                    + e.getClass().getSimpleName() + ")", e);
        } finally {
            deadline.cancel(false);
            watch.cancel(false);
        }
    }

    /** One line without its newline; null at the end. */
    private static byte[] line(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                return out.toByteArray();
            }
            if (out.size() >= MAX_LINE) {
                throw new E2bProtocolException("a line of the code interpreter's answer is longer than " + MAX_LINE
                        + " bytes", 200, null);
            }
            out.write(b);
        }
        return out.size() == 0 ? null : out.toByteArray();
    }
}
