package dev.codeexec.e2b;

/**
 * E2B refused the credentials (HTTP 401 or 403), or none were configured: the API key ({@code E2B_API_KEY} or
 * {@code E2bEngine.Builder.apiKey}) is missing, wrong or lacks access, or a sandbox refused its envd access token. Not
 * retried: fix the key.
 */
public final class E2bAuthenticationException extends E2bApiException {

    public E2bAuthenticationException(String message, int httpStatus, String errorCode) {
        super(message, httpStatus, errorCode);
    }
}
