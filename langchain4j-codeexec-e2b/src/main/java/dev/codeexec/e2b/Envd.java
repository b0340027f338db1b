package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * The envd data plane of one sandbox: Connect unary and server-streaming calls with the JSON codec
 * ({@code POST /<package>.<Service>/<Method>}), and the upload route ({@code POST /files}; reads never use
 * {@code GET /files}, which follows links: see {@link SandboxRead}). Every request
 * names the sandbox and port by header, carries the access token, and acts as a Linux user ({@code Authorization:
 * Basic base64("<user>:")}, or {@code username=} on the file routes).
 */
final class Envd {

    static final String ROOT = "root";

    private final E2bHttp http;
    private final SandboxAddress address;

    Envd(E2bHttp http, SandboxAddress address) {
        this.http = http;
        this.address = address;
    }

    String sandboxId() {
        return address.sandboxId();
    }

    E2bHttp http() {
        return http;
    }

    SandboxAddress address() {
        return address;
    }

    private HttpRequest.Builder rpc(String method, String user) {
        HttpRequest.Builder b = http.request(address.envd("/" + method))
                .header("Connect-Protocol-Version", "1")
                .header("Authorization", basic(user));
        return address.headers(b, SandboxAddress.ENVD_PORT);
    }

    static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A unary call.
     *
     * @param method for example {@code filesystem.Filesystem/Stat}
     * @return the answer message
     * @throws E2bApiException for an error answer; its {@link E2bApiException#errorCode()} is the Connect code
     *                         ({@code not_found}, {@code already_exists}, ...)
     */
    JsonNode call(String method, ObjectNode message, String user, E2bHttp.Retry retry, String what) {
        HttpRequest req = rpc(method, user)
                .header("Content-Type", "application/json")
                .header("Connect-Timeout-Ms", Long.toString(http.config().requestTimeout().toMillis()))
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(message))).build();
        E2bHttp.Answer a = http.call(req, retry, what, Bounded.JSON_BYTES);
        if (a.status() != 200) {
            throw E2bErrors.sandbox(a, what, sandboxId());
        }
        return Json.parse(a.body(), what);
    }

    /**
     * Opens a server-streaming call: the request is one envelope; the answer's envelopes are read from the returned
     * stream. Only a connection that could not be made is retried (starting a program twice is not safe).
     *
     * @param deadline  sent as {@code Connect-Timeout-Ms}: envd ends the call (and kills a program it started) at it
     * @param keepalive sent as {@code Keepalive-Ping-Interval}: envd sends a keepalive message at least this often
     * @throws E2bApiException for an answer that is not a stream (an error before the stream began)
     */
    EnvdStream stream(String method, ObjectNode message, String user, Duration deadline, Duration keepalive,
                      String what) {
        // Silence four times the keepalive interval long means the path is broken: the watchdog closes the stream.
        Duration idleLimit = keepalive.multipliedBy(4);
        HttpRequest req = rpc(method, user)
                .header("Content-Type", "application/connect+json")
                .header("Connect-Timeout-Ms", Long.toString(Math.max(1, deadline.toMillis())))
                .header("Keepalive-Ping-Interval", Long.toString(Math.max(1, keepalive.toSeconds())))
                .POST(HttpRequest.BodyPublishers.ofByteArray(ConnectFrames.envelope(Json.bytes(message)))).build();
        HttpResponse<InputStream> r = http.open(req, what);
        if (r.statusCode() != 200) {
            byte[] body;
            try (InputStream in = r.body()) {
                body = in.readNBytes(Bounded.ERROR_BYTES);
            } catch (IOException e) {
                body = new byte[0];
            }
            throw E2bErrors.sandbox(new E2bHttp.Answer(r.statusCode(), r.headers(), body, 1), what, sandboxId());
        }
        String type = r.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("application/connect+json")) {
            closeQuietly(r.body());
            throw new E2bProtocolException("the answer to '" + what + "' is not a Connect stream (Content-Type '"
                    + type + "')", r.statusCode(), null);
        }
        return new EnvdStream(r.body(), sandboxId(), what, idleLimit);
    }

    /**
     * Uploads files in one {@code multipart/form-data} request: one part named {@code file} per file, its filename the
     * absolute target path (envd creates missing parents, owned by {@code user}, and truncates an existing file: the
     * targets are always fresh names in the engine's staging directory).
     *
     * @param body   the multipart body (see {@link Multipart})
     * @param retry  {@link E2bHttp.Retry#TRANSIENT} when the body can be sent again
     */
    void upload(Multipart body, String user, E2bHttp.Retry retry, String what) {
        HttpRequest req = address.headers(http.request(address.envd("/files?username=" + enc(user)))
                        .header("Content-Type", body.contentType()), SandboxAddress.ENVD_PORT)
                .POST(body.publisher()).build();
        E2bHttp.Answer a = http.call(req, retry, what, Bounded.JSON_BYTES);
        if (a.status() != 200 && a.status() != 204) {
            throw E2bErrors.sandbox(a, what, sandboxId());
        }
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Nothing to release.
        }
    }

    /** A multipart body and its content type. */
    interface Multipart {
        String contentType();

        HttpRequest.BodyPublisher publisher();

        static Multipart of(String boundary, Supplier<HttpRequest.BodyPublisher> publisher) {
            return new Multipart() {
                @Override
                public String contentType() {
                    return "multipart/form-data; boundary=" + boundary;
                }

                @Override
                public HttpRequest.BodyPublisher publisher() {
                    return publisher.get();
                }
            };
        }
    }
}
