package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpTimeoutException;

/**
 * The one translator from what E2B answered to this library's exceptions; {@code E2bErrorsTest} holds its table.
 *
 * <table>
 *   <caption>HTTP status to exception</caption>
 *   <tr><th>answer</th><th>exception</th></tr>
 *   <tr><td>401, 403 (or Connect {@code unauthenticated}, {@code permission_denied})</td>
 *       <td>{@link E2bAuthenticationException}</td></tr>
 *   <tr><td>404, 410 on a sandbox; 502 "sandbox not found" from the sandbox proxy</td>
 *       <td>{@link E2bSandboxGoneException}</td></tr>
 *   <tr><td>404 on sandbox creation</td><td>{@link E2bTemplateNotFoundException}</td></tr>
 *   <tr><td>409</td><td>{@link E2bConflictException}</td></tr>
 *   <tr><td>429 after the last retry</td><td>{@link E2bRateLimitException}</td></tr>
 *   <tr><td>5xx after the last retry, any other status</td><td>{@link E2bApiException}</td></tr>
 * </table>
 *
 * <p>Control-plane messages quote E2B's own message (it names no paths). Messages about a sandbox's envd carry the
 * status and Connect code only: envd's text names paths inside the sandbox, which callers must not see.
 */
final class E2bErrors {

    /** The message of the sandbox proxy's answer for a sandbox that does not exist (with HTTP 502). */
    static final String PROXY_NOT_FOUND = "The sandbox was not found";

    private E2bErrors() {
    }

    /** A failure of a control-plane request about {@code sandboxId} (null for requests about no sandbox). */
    static RuntimeException controlPlane(E2bHttp.Answer a, String what, String sandboxId, String template) {
        JsonNode body = Json.parseOrNull(a.body());
        String message = Json.text(body, "message");
        String errorCode = Json.text(body, "error_code");
        String said = message == null ? Json.preview(a.body()) : message;
        String tried = a.attempts() > 1 ? " (after " + a.attempts() + " attempts)" : "";
        int s = a.status();
        String text = "E2B could not " + what + ": HTTP " + s + tried + ": " + said;
        if (s == 401 || s == 403) {
            return new E2bAuthenticationException(text + "; check the API key (E2B_API_KEY)", s, errorCode);
        }
        if ((s == 404 || s == 410) && sandboxId != null) {
            return new E2bSandboxGoneException("sandbox " + sandboxId + " is gone (it timed out or was killed): "
                    + text, sandboxId, s, errorCode);
        }
        if (s == 404 && template != null) {
            return new E2bTemplateNotFoundException(text + "; check the template name", template, s, errorCode);
        }
        if (s == 409) {
            return new E2bConflictException(text, s, errorCode);
        }
        if (s == 429) {
            return new E2bRateLimitException(text, s, errorCode);
        }
        return new E2bApiException(text, s, errorCode);
    }

    /**
     * A failure of a request to a sandbox's envd or code interpreter: a Connect error body
     * ({@code {"code":"not_found","message":…}}), the sandbox proxy's JSON, or a plain gateway answer mapped by its
     * status.
     */
    static RuntimeException sandbox(E2bHttp.Answer a, String what, String sandboxId) {
        JsonNode body = Json.parseOrNull(a.body());
        int s = a.status();
        if (isProxyNotFound(s, body)) {
            return gone(sandboxId, what, s);
        }
        String code = body != null && body.path("code").isTextual() ? body.path("code").asText() : codeOf(s);
        return connect(code, what, sandboxId, s, a.attempts());
    }

    /** A Connect error ({@code code} as a string), from a unary answer or an end-of-stream frame. */
    static RuntimeException connect(String code, String what, String sandboxId, int status, int attempts) {
        String tried = attempts > 1 ? " after " + attempts + " attempts" : "";
        String text = "sandbox " + sandboxId + " could not " + what + " (" + code
                + (status > 0 ? ", HTTP " + status : "") + tried + ")";
        return switch (code) {
            case "unauthenticated", "permission_denied" -> new E2bAuthenticationException(text
                    + "; the sandbox refused the access token", status, code);
            case "resource_exhausted" -> new E2bRateLimitException(text, status, code);
            default -> new E2bApiException(text, status, code);
        };
    }

    static E2bSandboxGoneException gone(String sandboxId, String what, int status) {
        return new E2bSandboxGoneException("sandbox " + sandboxId + " is gone (it timed out or was killed); could "
                + "not " + what, sandboxId, status, "not_found");
    }

    /** True for the sandbox proxy's "sandbox not found" answer: {@code {"sandboxId":…,"message":…,"code":502}}. */
    static boolean isProxyNotFound(int status, JsonNode body) {
        return status == 502 && body != null && body.has("sandboxId")
                && PROXY_NOT_FOUND.equals(Json.text(body, "message"));
    }

    /** The Connect code a plain gateway status stands for (protocols: 404, 429, 502/503, 504). */
    static String codeOf(int status) {
        return switch (status) {
            case 400 -> "invalid_argument";
            case 401 -> "unauthenticated";
            case 403 -> "permission_denied";
            case 404 -> "not_found";
            case 409 -> "already_exists";
            case 429 -> "resource_exhausted";
            case 502, 503 -> "unavailable";
            case 504 -> "deadline_exceeded";
            case 507 -> "resource_exhausted";
            case 501 -> "unimplemented";
            default -> status >= 500 ? "internal" : "unknown";
        };
    }

    /** True for an answer worth another attempt: 429 and 5xx, but not a sandbox that does not exist. */
    static boolean isTransient(int status, byte[] body) {
        if (status == 429 || status == 500 || status == 503 || status == 504) {
            return true;
        }
        return status == 502 && !isProxyNotFound(status, Json.parseOrNull(body));
    }

    /** A request that could not be completed on any attempt. */
    static E2bApiException transport(IOException e, String what, URI uri, int attempts) {
        String tried = attempts > 1 ? " (" + attempts + " attempts)" : "";
        String why = e instanceof HttpTimeoutException ? "no answer within the request timeout"
                : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        return new E2bApiException("could not " + what + " at " + uri.getScheme() + "://" + uri.getAuthority()
                + tried + ": " + why, 0, null, e);
    }
}
