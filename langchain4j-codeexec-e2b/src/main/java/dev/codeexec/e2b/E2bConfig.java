package dev.codeexec.e2b;

import dev.codeexec.engine.InvalidSpecException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Where and how to reach E2B: the API key, the domain, the control-plane URL, an optional data-plane URL, and the
 * bounds of every request. Immutable; {@link #builder()} resolves what is not set from the environment as E2B's SDKs
 * do: {@code E2B_API_KEY}, {@code E2B_DOMAIN} (default {@value #DEFAULT_DOMAIN}), {@code E2B_API_URL} (default
 * {@code https://api.<domain>}) and {@code E2B_SANDBOX_URL} (default: none, each sandbox's own address).
 *
 * <p>{@link #toString()} never shows the key.
 */
public final class E2bConfig {

    /** E2B's public domain: {@value}. */
    public static final String DEFAULT_DOMAIN = "e2b.app";

    /** How long one request may take to be answered (the headers of a stream): 60 seconds, as E2B's SDKs. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);

    /** How long establishing a connection may take: 10 seconds. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** How many times a request is sent at most when E2B answers 429 or 5xx: {@value}. */
    public static final int DEFAULT_MAX_ATTEMPTS = 4;

    /** The first pause between attempts, doubled each time (with jitter), at most {@link #MAX_BACKOFF}: 250 ms. */
    public static final Duration DEFAULT_BACKOFF = Duration.ofMillis(250);

    /** The longest pause between two attempts, also for a {@code Retry-After} the server asks for: 8 seconds. */
    public static final Duration MAX_BACKOFF = Duration.ofSeconds(8);

    private final String apiKey;
    private final String domain;
    private final URI apiUrl;
    private final URI sandboxUrl;
    private final Duration requestTimeout;
    private final Duration connectTimeout;
    private final int maxAttempts;
    private final Duration backoff;

    private E2bConfig(Builder b) {
        Map<String, String> env = b.environment == null ? System.getenv() : b.environment;
        String key = firstSet(b.apiKey, env.get("E2B_API_KEY"));
        if (key == null) {
            throw new E2bAuthenticationException("no E2B API key: set E2B_API_KEY or E2bEngine.builder().apiKey(...) "
                    + "(keys are at https://e2b.dev/dashboard)", 0, null);
        }
        this.apiKey = key;
        this.domain = firstSet(b.domain, env.get("E2B_DOMAIN"), DEFAULT_DOMAIN);
        this.apiUrl = uri(firstSet(b.apiUrl, env.get("E2B_API_URL"), "https://api." + domain), "apiUrl");
        String sandbox = firstSet(b.sandboxUrl, env.get("E2B_SANDBOX_URL"));
        this.sandboxUrl = sandbox == null ? null : uri(sandbox, "sandboxUrl");
        this.requestTimeout = positive(b.requestTimeout, DEFAULT_REQUEST_TIMEOUT, "requestTimeout");
        this.connectTimeout = positive(b.connectTimeout, DEFAULT_CONNECT_TIMEOUT, "connectTimeout");
        this.maxAttempts = b.maxAttempts == null ? DEFAULT_MAX_ATTEMPTS : b.maxAttempts;
        if (maxAttempts < 1) {
            throw new InvalidSpecException("maxAttempts (" + maxAttempts + ") must be at least 1");
        }
        this.backoff = b.backoff == null ? DEFAULT_BACKOFF : b.backoff;
        if (backoff.isNegative()) {
            throw new InvalidSpecException("backoff (" + backoff + ") must not be negative");
        }
    }

    private static String firstSet(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v.strip();
            }
        }
        return null;
    }

    private static URI uri(String s, String name) {
        String trimmed = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
        URI u;
        try {
            u = URI.create(trimmed);
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException(name + " ('" + s + "') is not a URL");
        }
        if (u.getScheme() == null || !(u.getScheme().equals("https") || u.getScheme().equals("http"))
                || u.getHost() == null) {
            throw new InvalidSpecException(name + " ('" + s + "') must be an http or https URL");
        }
        return u;
    }

    private static Duration positive(Duration d, Duration fallback, String name) {
        Duration v = d == null ? fallback : d;
        if (v.isZero() || v.isNegative()) {
            throw new InvalidSpecException(name + " (" + v + ") must be positive");
        }
        return v;
    }

    /** A builder; what is not set comes from the environment or the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The API key, sent as {@code X-API-Key} to the control plane only. */
    String apiKey() {
        return apiKey;
    }

    /** The domain sandboxes are reached under when a sandbox does not name its own. */
    public String domain() {
        return domain;
    }

    /** The control plane's base URL. */
    public URI apiUrl() {
        return apiUrl;
    }

    /**
     * The one data-plane URL for every sandbox (a proxy, a self-hosted deployment, a test server), with the sandbox
     * and port named by the {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port} headers; null for each sandbox's own
     * address.
     */
    public URI sandboxUrl() {
        return sandboxUrl;
    }

    /** How long one request may take to be answered. */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** How long establishing a connection may take. */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** How many times a retryable request is sent at most. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** The first pause between attempts. */
    public Duration backoff() {
        return backoff;
    }

    @Override
    public String toString() {
        return "E2bConfig{apiUrl=" + apiUrl + ", domain=" + domain + ", sandboxUrl=" + sandboxUrl + ", apiKey="
                + mask(apiKey) + ", requestTimeout=" + requestTimeout + ", maxAttempts=" + maxAttempts + "}";
    }

    /** A key as logs may show it: its first characters only. */
    static String mask(String key) {
        if (key == null) {
            return "null";
        }
        return key.length() <= 8 ? "****" : key.substring(0, 4) + "****";
    }

    /** Builder of {@link E2bConfig}; every field is optional. */
    public static final class Builder {
        private String apiKey;
        private String domain;
        private String apiUrl;
        private String sandboxUrl;
        private Duration requestTimeout;
        private Duration connectTimeout;
        private Integer maxAttempts;
        private Duration backoff;
        private Map<String, String> environment;

        private Builder() {
        }

        /** The API key; default {@code E2B_API_KEY}. Required one way or the other. */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /** The domain; default {@code E2B_DOMAIN}, else {@value E2bConfig#DEFAULT_DOMAIN}. */
        public Builder domain(String domain) {
            this.domain = domain;
            return this;
        }

        /** The control plane's URL; default {@code E2B_API_URL}, else {@code https://api.<domain>}. */
        public Builder apiUrl(String apiUrl) {
            this.apiUrl = apiUrl;
            return this;
        }

        /**
         * One data-plane URL for every sandbox (sandboxes are then named by headers); default
         * {@code E2B_SANDBOX_URL}, else each sandbox's own address.
         */
        public Builder sandboxUrl(String sandboxUrl) {
            this.sandboxUrl = sandboxUrl;
            return this;
        }

        /** How long one request may take to be answered; default 60 seconds. */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /** How long establishing a connection may take; default 10 seconds. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /**
         * How often a request that E2B answers with 429 or 5xx is sent at most, and the first pause between two
         * attempts (doubled each time, with jitter, at most 8 s); default {@value E2bConfig#DEFAULT_MAX_ATTEMPTS}
         * attempts, 250 ms.
         */
        public Builder retries(int maxAttempts, Duration firstBackoff) {
            this.maxAttempts = maxAttempts;
            this.backoff = Objects.requireNonNull(firstBackoff, "firstBackoff");
            return this;
        }

        /** The environment the {@code E2B_*} variables are read from; default {@code System.getenv()}. */
        public Builder environment(Map<String, String> environment) {
            this.environment = environment == null ? null : Map.copyOf(environment);
            return this;
        }

        /**
         * @throws E2bAuthenticationException when no API key is set here or in the environment
         * @throws InvalidSpecException       for a URL that is not http(s) or a bound that is not positive
         */
        public E2bConfig build() {
            return new E2bConfig(this);
        }
    }
}
