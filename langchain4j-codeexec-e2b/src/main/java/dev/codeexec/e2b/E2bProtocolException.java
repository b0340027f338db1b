package dev.codeexec.e2b;

/**
 * An answer could not be read as the protocol defines it: a Connect envelope with a bad length or flags, a stream
 * that ended before its end-of-stream frame, a body that is not the JSON expected, an answer larger than this library
 * accepts. Whatever the request had started (a program) was stopped first. Usually a network or proxy fault; report
 * it when it persists.
 */
public final class E2bProtocolException extends E2bApiException {

    public E2bProtocolException(String message, int httpStatus, String errorCode) {
        super(message, httpStatus, errorCode);
    }

    public E2bProtocolException(String message, Throwable cause) {
        super(message, 0, null, cause);
    }
}
