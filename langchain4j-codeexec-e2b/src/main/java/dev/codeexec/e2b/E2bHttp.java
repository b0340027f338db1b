package dev.codeexec.e2b;

import dev.codeexec.engine.CodeExecException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.UnresolvedAddressException;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one HTTP transport of both planes: a JDK {@link HttpClient} on HTTP/1.1 (pooled keep-alive connections; closing
 * a stream closes its connection, which is how E2B's code interpreter learns that a client gave up), bounded request
 * and connect timeouts, bounded bodies, and the retry rule: answers 429 and 5xx (except "sandbox not found"), and
 * connections that failed, are retried with a doubling, jittered backoff up to {@link E2bConfig#maxAttempts()}
 * attempts, when the request may be sent again. Failures become typed exceptions through {@link E2bErrors} only.
 *
 * <p>Thread-safe; shared by every sandbox of an engine.
 */
final class E2bHttp implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(E2bHttp.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** May a request be sent again after a failure? */
    enum Retry {
        /** Never: sending it twice could do the work twice (starting a program, writing stdin). */
        NEVER,
        /** Only when it provably never left (the connection could not be made). */
        IF_NOT_SENT,
        /** Also after a transient answer or a broken connection: the request is idempotent. */
        TRANSIENT
    }

    /** A whole answer, and how many attempts it took. */
    record Answer(int status, HttpHeaders headers, byte[] body, int attempts) {
        boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    private final E2bConfig config;
    private final ExecutorService executor;
    private final HttpClient client;

    E2bHttp(E2bConfig config) {
        this.config = config;
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "codeexec-e2b-http-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.connectTimeout())
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(executor)
                .build();
    }

    E2bConfig config() {
        return config;
    }

    /** A request builder with the request timeout set. */
    HttpRequest.Builder request(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(config.requestTimeout());
    }

    /**
     * Sends a request and reads its whole answer (at most {@code maxBytes}), retrying as {@code retry} allows. A
     * non-2xx answer that is not retried, or is still there after the last attempt, is returned as it is: the caller
     * translates it (it knows what a 404 means there).
     *
     * @param what what the request does, for messages ("create a sandbox")
     * @throws E2bApiException   when the connection failed on every attempt
     * @throws CodeExecException when interrupted
     */
    Answer call(HttpRequest request, Retry retry, String what, int maxBytes) {
        int attempt = 0;
        while (true) {
            attempt++;
            Answer answer;
            try {
                HttpResponse<InputStream> r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
                byte[] body;
                try (InputStream in = r.body()) {
                    body = Bounded.read(in, maxBytes, what);
                }
                answer = new Answer(r.statusCode(), r.headers(), body, attempt);
            } catch (IOException e) {
                boolean notSent = notSent(e);
                if (attempt < config.maxAttempts()
                        && (retry == Retry.TRANSIENT || retry == Retry.IF_NOT_SENT && notSent)) {
                    LOG.debug("{}: attempt {} failed ({}), retrying", what, attempt, e.toString());
                    pause(attempt, OptionalLong.empty(), what);
                    continue;
                }
                throw E2bErrors.transport(e, what, request.uri(), attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CodeExecException("interrupted while waiting for E2B to " + what, e);
            }
            if (!answer.ok() && retry == Retry.TRANSIENT && attempt < config.maxAttempts()
                    && E2bErrors.isTransient(answer.status(), answer.body())) {
                LOG.debug("{}: attempt {} answered {}, retrying", what, attempt, answer.status());
                pause(attempt, retryAfter(answer.headers()), what);
                continue;
            }
            return answer;
        }
    }

    /**
     * Opens a streaming request: returns once the answer's headers arrived (within the request timeout), with the body
     * lent to the caller, who must close it. Only a connection that could not be made is retried.
     *
     * @throws E2bApiException when the connection failed
     */
    HttpResponse<InputStream> open(HttpRequest request, String what) {
        int attempt = 0;
        while (true) {
            attempt++;
            try {
                return client.send(request, HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                if (attempt < config.maxAttempts() && notSent(e)) {
                    pause(attempt, OptionalLong.empty(), what);
                    continue;
                }
                throw E2bErrors.transport(e, what, request.uri(), attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CodeExecException("interrupted while waiting for E2B to " + what, e);
            }
        }
    }

    /** True when the failure happened before the request could have been sent. */
    private static boolean notSent(IOException e) {
        Throwable t = e;
        for (int i = 0; t != null && i < 5; i++, t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof HttpConnectTimeoutException
                    || t instanceof UnresolvedAddressException) {
                return true;
            }
        }
        return false;
    }

    private static OptionalLong retryAfter(HttpHeaders headers) {
        return headers.firstValue("Retry-After").map(String::strip).filter(v -> v.matches("\\d{1,6}"))
                .map(v -> OptionalLong.of(Long.parseLong(v) * 1000)).orElse(OptionalLong.empty());
    }

    /** Waits before attempt {@code attempt + 1}: the doubling backoff with jitter, or what the server asked for. */
    private void pause(int attempt, OptionalLong retryAfterMillis, String what) {
        long base = config.backoff().toMillis() << Math.min(attempt - 1, 16);
        long jittered = (long) (base * (0.5 + ThreadLocalRandom.current().nextDouble() * 0.5));
        long wait = Math.min(Math.max(jittered, retryAfterMillis.orElse(0)), E2bConfig.MAX_BACKOFF.toMillis());
        try {
            Thread.sleep(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting to retry: " + what, e);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
