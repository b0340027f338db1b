package dev.codeexec.e2b;

import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Set;

/**
 * How one sandbox's ports are reached (protocols.md A.2, E2B SDK {@code connectionConfig}). envd (port
 * {@value #ENVD_PORT}) is addressed by header on E2B's own domains: {@code https://sandbox.<domain>} with
 * {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port}; on other domains by host, {@code https://<port>-<id>.<domain>}.
 * The code interpreter (port {@value #INTERPRETER_PORT}) is addressed by host. A configured sandbox URL
 * ({@code E2B_SANDBOX_URL}) replaces both bases; the headers always name the sandbox and port, and carry the access
 * tokens.
 */
final class SandboxAddress {

    static final int ENVD_PORT = 49983;
    static final int INTERPRETER_PORT = 49999;

    /** Domains whose proxy routes {@code sandbox.<domain>} by header (E2B SDK {@code supportedDomains}). */
    private static final Set<String> HEADER_ROUTED = Set.of("e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev");

    private final String sandboxId;
    private final URI envd;
    private final URI interpreter;
    private final String accessToken;
    private final String trafficToken;

    private SandboxAddress(String sandboxId, URI envd, URI interpreter, String accessToken, String trafficToken) {
        this.sandboxId = sandboxId;
        this.envd = envd;
        this.interpreter = interpreter;
        this.accessToken = accessToken;
        this.trafficToken = trafficToken;
    }

    static SandboxAddress of(E2bSandbox sb, E2bConfig config) {
        String domain = sb.domain() == null || sb.domain().isBlank() ? config.domain() : sb.domain();
        URI envd;
        URI interpreter;
        if (config.sandboxUrl() != null) {
            envd = config.sandboxUrl();
            interpreter = config.sandboxUrl();
        } else {
            envd = URI.create(HEADER_ROUTED.contains(domain) ? "https://sandbox." + domain
                    : "https://" + ENVD_PORT + "-" + sb.sandboxId() + "." + domain);
            interpreter = URI.create("https://" + INTERPRETER_PORT + "-" + sb.sandboxId() + "." + domain);
        }
        return new SandboxAddress(sb.sandboxId(), envd, interpreter, sb.envdAccessToken(), sb.trafficAccessToken());
    }

    String sandboxId() {
        return sandboxId;
    }

    /** The URL of {@code path} on envd. */
    URI envd(String path) {
        return URI.create(envd + path);
    }

    /** The URL of {@code path} on the code interpreter. */
    URI interpreter(String path) {
        return URI.create(interpreter + path);
    }

    /** Adds the routing headers and access tokens of {@code port}. */
    HttpRequest.Builder headers(HttpRequest.Builder b, int port) {
        b.header("E2b-Sandbox-Id", sandboxId).header("E2b-Sandbox-Port", Integer.toString(port));
        if (accessToken != null && !accessToken.isEmpty()) {
            b.header("X-Access-Token", accessToken);
        }
        if (port != ENVD_PORT && trafficToken != null && !trafficToken.isEmpty()) {
            b.header("E2B-Traffic-Access-Token", trafficToken);
        }
        return b;
    }
}
