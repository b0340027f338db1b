package dev.codeexec.e2b;

import dev.codeexec.engine.InvalidSpecException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A sandbox to create ({@code NewSandbox}): the template, how long it lives without a renewal, metadata to find it
 * by, environment variables for the processes envd starts, and network access, which is <strong>off</strong> unless
 * asked for (E2B's own default is on).
 *
 * @param template            a template id or alias, such as {@code code-interpreter-v1} or {@code base}
 * @param timeout             time to live from creation; E2B kills (or pauses) the sandbox when it passes without a
 *                            renewal ({@link E2bControlPlane#setTimeout})
 * @param metadata            key-value pairs shown in E2B's dashboard and usable as a list filter
 * @param envVars             environment variables of every process envd starts in the sandbox
 * @param allowInternetAccess whether programs may reach the internet (sent as {@code allow_internet_access})
 * @param secure              whether envd requires the sandbox's access token on every request
 * @param autoPause           pause instead of kill when the timeout passes
 */
public record SandboxSpec(String template, Duration timeout, Map<String, String> metadata, Map<String, String> envVars,
                          boolean allowInternetAccess, boolean secure, boolean autoPause) {

    /** The time to live of a sandbox when none is given: 300 seconds, as E2B's SDKs. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);

    public SandboxSpec {
        if (template == null || template.isBlank()) {
            throw new InvalidSpecException("template must be set (a template id or alias, e.g. code-interpreter-v1)");
        }
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new InvalidSpecException("timeout (" + timeout + ") must be positive");
        }
        metadata = Map.copyOf(metadata);
        envVars = Map.copyOf(envVars);
    }

    /** A builder for a sandbox of {@code template}. */
    public static Builder builder(String template) {
        return new Builder(template);
    }

    /** Builder of {@link SandboxSpec}. */
    public static final class Builder {
        private final String template;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private final Map<String, String> envVars = new LinkedHashMap<>();
        private boolean allowInternetAccess;
        private boolean secure = true;
        private boolean autoPause;

        private Builder(String template) {
            this.template = template;
        }

        /** Time to live without a renewal; default 300 seconds. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** Adds metadata. */
        public Builder metadata(Map<String, String> metadata) {
            this.metadata.putAll(metadata);
            return this;
        }

        /** Adds environment variables of the processes envd starts. */
        public Builder envVars(Map<String, String> envVars) {
            this.envVars.putAll(envVars);
            return this;
        }

        /** Lets programs reach the internet; default false. */
        public Builder allowInternetAccess(boolean allow) {
            this.allowInternetAccess = allow;
            return this;
        }

        /** Requires envd's access token; default true. */
        public Builder secure(boolean secure) {
            this.secure = secure;
            return this;
        }

        /** Pauses instead of killing at the timeout; default false. */
        public Builder autoPause(boolean autoPause) {
            this.autoPause = autoPause;
            return this;
        }

        public SandboxSpec build() {
            return new SandboxSpec(template, timeout, metadata, envVars, allowInternetAccess, secure, autoPause);
        }
    }
}
