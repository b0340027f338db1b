package dev.codeexec.e2b;

/**
 * E2B kept answering 429 (too many requests, or the team's concurrent sandbox limit) through every retry. Retry later,
 * lower the load, or raise the limit with E2B.
 */
public final class E2bRateLimitException extends E2bApiException {

    public E2bRateLimitException(String message, int httpStatus, String errorCode) {
        super(message, httpStatus, errorCode);
    }
}
