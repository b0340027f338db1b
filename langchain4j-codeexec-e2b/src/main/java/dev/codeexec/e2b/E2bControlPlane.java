package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.InvalidSpecException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * E2B's REST control plane ({@code https://api.<domain>}, {@code X-API-Key}): create, connect to (and so resume),
 * describe, list, renew, pause and kill sandboxes. Every request is bounded by the request timeout; answers 429 and
 * 5xx (and failed connections) are retried with a bounded, jittered backoff where sending the request again is safe,
 * and then end in a typed exception ({@link E2bErrors} holds the table): {@link E2bAuthenticationException},
 * {@link E2bSandboxGoneException}, {@link E2bTemplateNotFoundException}, {@link E2bConflictException},
 * {@link E2bRateLimitException}, {@link E2bApiException}.
 *
 * <p>Sandboxes cost money while they run: whoever creates one owns it and must {@link #kill} it (or let its timeout
 * pass). {@link E2bEngine} does that for the sandboxes it creates.
 *
 * <pre>{@code
 * try (E2bControlPlane api = E2bControlPlane.create(E2bConfig.builder().build())) {   // E2B_API_KEY
 *     E2bSandbox sb = api.create(SandboxSpec.builder("base").timeout(Duration.ofMinutes(5)).build());
 *     try {
 *         api.setTimeout(sb.sandboxId(), Duration.ofMinutes(10));
 *     } finally {
 *         api.kill(sb.sandboxId());
 *     }
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class E2bControlPlane implements AutoCloseable {

    private static final String USER_AGENT = "langchain4j-codeexec-e2b";

    private final E2bHttp http;
    private final boolean ownsHttp;

    E2bControlPlane(E2bHttp http) {
        this.http = http;
        this.ownsHttp = false;
    }

    private E2bControlPlane(E2bHttp http, boolean owns) {
        this.http = http;
        this.ownsHttp = owns;
    }

    /** A control-plane client with its own connection pool; close it when done. */
    public static E2bControlPlane create(E2bConfig config) {
        return new E2bControlPlane(new E2bHttp(config), true);
    }

    private HttpRequest.Builder request(String path) {
        return http.request(URI.create(http.config().apiUrl() + path))
                .header("X-API-Key", http.config().apiKey())
                .header("User-Agent", USER_AGENT);
    }

    private static HttpRequest.BodyPublisher json(JsonNode body) {
        return HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body));
    }

    /**
     * Creates a sandbox and returns once it runs. Retried on 429 and 5xx: an attempt that failed on the server's side
     * may still have created a sandbox, so each attempt carries a metadata tag of its own ({@code dev.codeexec.create})
     * and the sandboxes such an attempt left are looked up by it and killed.
     *
     * @throws E2bTemplateNotFoundException when the template does not exist for this key
     */
    public E2bSandbox create(SandboxSpec spec) {
        return create(spec, null);
    }

    /** {@link #create(SandboxSpec)} with E2B's egress controls for a policy ({@code null}: none). */
    E2bSandbox create(SandboxSpec spec, E2bEgress egress) {
        String what = "create a sandbox from template '" + spec.template() + "'";
        String tag = java.util.UUID.randomUUID().toString();
        ObjectNode body = Json.object();
        body.put("templateID", spec.template());
        body.put("timeout", seconds(spec.timeout()));
        body.put("autoPause", spec.autoPause());
        body.put("secure", spec.secure());
        body.put("allow_internet_access", spec.allowInternetAccess());
        if (egress != null) {
            egress.writeTo(body);
        }
        ObjectNode meta = body.putObject("metadata");
        spec.metadata().forEach(meta::put);
        meta.put(CREATE_TAG, tag);
        if (!spec.envVars().isEmpty()) {
            ObjectNode env = body.putObject("envVars");
            spec.envVars().forEach(env::put);
        }
        // Sent as often as the server answers 429 or 5xx; every attempt is the same request with the same tag, so
        // whatever the failed ones created can be found.
        E2bHttp.Answer a;
        try {
            a = http.call(request("/sandboxes").header("Content-Type", "application/json").POST(json(body)).build(),
                    E2bHttp.Retry.TRANSIENT, what, Bounded.JSON_BYTES);
        } catch (E2bApiException e) {
            // No answer at all (a timeout, a broken connection): the server may have created it anyway.
            killTagged(tag, null);
            throw e;
        }
        if (a.status() != 201 && a.status() != 200) {
            if (a.attempts() > 1 || a.status() >= 500) {
                killTagged(tag, null);
            }
            throw E2bErrors.controlPlane(a, what, null, spec.template());
        }
        E2bSandbox sb = sandbox(Json.parse(a.body(), what), what);
        if (a.attempts() > 1) {
            killTagged(tag, sb.sandboxId());
        }
        return sb;
    }

    /** The metadata key each creation attempt is tagged with, so what a failed attempt created can be found. */
    public static final String CREATE_TAG = "dev.codeexec.create";

    /** Kills the sandboxes tagged {@code tag} except {@code keep}; best effort, on a failure path. */
    private void killTagged(String tag, String keep) {
        try {
            for (E2bSandbox s : list(Map.of(CREATE_TAG, tag))) {
                if (!s.sandboxId().equals(keep)) {
                    kill(s.sandboxId());
                }
            }
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(E2bControlPlane.class).warn("could not look for sandboxes a failed "
                    + "creation may have left (metadata {}={}): {}", CREATE_TAG, tag, e.getMessage());
        }
    }

    /**
     * Connects to a sandbox: a running one answers at once, a paused one is resumed first. Its time to live becomes at
     * least {@code timeout} from now (never shortened).
     *
     * @throws E2bSandboxGoneException when there is no such sandbox
     */
    public E2bSandbox connect(String sandboxId, Duration timeout) {
        String what = "connect to sandbox " + sandboxId;
        ObjectNode body = Json.object();
        body.put("timeout", seconds(timeout));
        E2bHttp.Answer a = http.call(request("/sandboxes/" + id(sandboxId) + "/connect")
                .header("Content-Type", "application/json").POST(json(body)).build(), E2bHttp.Retry.TRANSIENT, what,
                Bounded.JSON_BYTES);
        if (a.status() != 200 && a.status() != 201) {
            throw E2bErrors.controlPlane(a, what, sandboxId, null);
        }
        return sandbox(Json.parse(a.body(), what), what);
    }

    /** Resumes a paused sandbox (and connects to a running one): {@link #connect}, which replaced E2B's resume. */
    public E2bSandbox resume(String sandboxId, Duration timeout) {
        return connect(sandboxId, timeout);
    }

    /**
     * Sets the sandbox's time to live to {@code timeout} from now (each call replaces the previous one; shorter is
     * allowed).
     *
     * @throws E2bSandboxGoneException when there is no such sandbox
     */
    public void setTimeout(String sandboxId, Duration timeout) {
        String what = "set the timeout of sandbox " + sandboxId;
        ObjectNode body = Json.object();
        body.put("timeout", seconds(timeout));
        E2bHttp.Answer a = http.call(request("/sandboxes/" + id(sandboxId) + "/timeout")
                .header("Content-Type", "application/json").POST(json(body)).build(), E2bHttp.Retry.TRANSIENT, what,
                Bounded.ERROR_BYTES);
        if (!a.ok()) {
            throw E2bErrors.controlPlane(a, what, sandboxId, null);
        }
    }

    /**
     * Pauses a sandbox (memory and file system are kept; it costs storage, not compute, until resumed with
     * {@link #connect}). Not retried after an answer: a pause that did happen would be answered 409 the second time.
     *
     * @throws E2bConflictException when it is already paused or cannot be paused
     */
    public void pause(String sandboxId) {
        String what = "pause sandbox " + sandboxId;
        E2bHttp.Answer a = http.call(request("/sandboxes/" + id(sandboxId) + "/pause")
                .POST(HttpRequest.BodyPublishers.noBody()).build(), E2bHttp.Retry.IF_NOT_SENT, what,
                Bounded.ERROR_BYTES);
        if (!a.ok()) {
            throw E2bErrors.controlPlane(a, what, sandboxId, null);
        }
    }

    /**
     * Kills a sandbox; its files are gone.
     *
     * @return true when it was killed, false when it was already gone
     */
    public boolean kill(String sandboxId) {
        String what = "kill sandbox " + sandboxId;
        E2bHttp.Answer a = http.call(request("/sandboxes/" + id(sandboxId)).DELETE().build(), E2bHttp.Retry.TRANSIENT,
                what, Bounded.ERROR_BYTES);
        if (a.status() == 404 || a.status() == 410) {
            return false;
        }
        if (!a.ok()) {
            throw E2bErrors.controlPlane(a, what, sandboxId, null);
        }
        return true;
    }

    /**
     * Describes a sandbox, running or paused.
     *
     * @throws E2bSandboxGoneException when there is no such sandbox
     */
    public E2bSandbox get(String sandboxId) {
        String what = "describe sandbox " + sandboxId;
        E2bHttp.Answer a = http.call(request("/sandboxes/" + id(sandboxId)).GET().build(), E2bHttp.Retry.TRANSIENT,
                what, Bounded.JSON_BYTES);
        if (!a.ok()) {
            throw E2bErrors.controlPlane(a, what, sandboxId, null);
        }
        return sandbox(Json.parse(a.body(), what), what);
    }

    /** Describes a sandbox, or empty when it does not exist (any more). */
    public Optional<E2bSandbox> find(String sandboxId) {
        try {
            return Optional.of(get(sandboxId));
        } catch (E2bSandboxGoneException e) {
            return Optional.empty();
        }
    }

    /** The running and paused sandboxes whose metadata contains all of {@code metadata}, every page. */
    public List<E2bSandbox> list(Map<String, String> metadata) {
        StringJoiner q = new StringJoiner("&");
        metadata.forEach((k, v) -> q.add(enc(k) + "=" + enc(v)));
        List<E2bSandbox> out = new ArrayList<>();
        String next = null;
        for (int page = 0; page < 1000; page++) {
            StringBuilder path = new StringBuilder("/v2/sandboxes?state=running,paused&limit=100");
            if (!metadata.isEmpty()) {
                path.append("&metadata=").append(enc(q.toString()));
            }
            if (next != null) {
                path.append("&nextToken=").append(enc(next));
            }
            String what = "list sandboxes";
            E2bHttp.Answer a = http.call(request(path.toString()).GET().build(), E2bHttp.Retry.TRANSIENT, what,
                    Bounded.JSON_BYTES);
            if (!a.ok()) {
                throw E2bErrors.controlPlane(a, what, null, null);
            }
            JsonNode arr = Json.parse(a.body(), what);
            if (!arr.isArray()) {
                throw new E2bProtocolException("the answer to '" + what + "' is not a JSON array", a.status(), null);
            }
            for (JsonNode n : arr) {
                out.add(sandbox(n, what));
            }
            next = a.headers().firstValue("X-Next-Token").filter(t -> !t.isBlank()).orElse(null);
            if (next == null || arr.isEmpty()) {
                break;
            }
        }
        return out;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A sandbox id as a path segment: ids are made of letters and digits; anything else is refused. */
    private static String id(String sandboxId) {
        if (sandboxId == null || !sandboxId.matches("[A-Za-z0-9_-]{1,128}")) {
            throw new InvalidSpecException("sandboxId ('" + sandboxId + "') is not a sandbox id");
        }
        return sandboxId;
    }

    /** Seconds for an int32 field: rounded up, at least 1. */
    static int seconds(Duration d) {
        long s = Math.max(1, (d.toMillis() + 999) / 1000);
        return (int) Math.min(Integer.MAX_VALUE, s);
    }

    static E2bSandbox sandbox(JsonNode n, String what) {
        String id = Json.text(n, "sandboxID");
        if (id == null || id.isBlank()) {
            throw new E2bProtocolException("the answer to '" + what + "' names no sandboxID", 0, null);
        }
        Map<String, String> meta = new LinkedHashMap<>();
        JsonNode m = n.get("metadata");
        if (m != null && m.isObject()) {
            for (Map.Entry<String, JsonNode> e : m.properties()) {
                meta.put(e.getKey(), e.getValue().asText());
            }
        }
        JsonNode internet = n.get("allowInternetAccess");
        return new E2bSandbox(id, Json.text(n, "templateID"), Json.text(n, "alias"), Json.text(n, "envdVersion"),
                Json.text(n, "envdAccessToken"), Json.text(n, "trafficAccessToken"), Json.text(n, "domain"),
                Json.text(n, "state"), time(Json.text(n, "startedAt")), time(Json.text(n, "endAt")), meta,
                internet == null || internet.isNull() ? null : internet.asBoolean());
    }

    private static Instant time(String s) {
        if (s == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(s).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** Closes the connection pool when this client created it ({@link #create}); a shared one is left alone. */
    @Override
    public void close() {
        if (ownsHttp) {
            http.close();
        }
    }
}
