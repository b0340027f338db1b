package dev.codeexec.kubernetes;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How the engine claims an agent-sandbox pod: which {@code SandboxWarmPool} to claim from, which API version of the
 * agent-sandbox groups the cluster serves, how long to wait for the claim, the claim's lifecycle, which container to
 * exec into, and how strict to be about the claimed pod's security settings. The compact constructor validates every
 * value and resolves the defaults once; {@link #of(String)} gives the defaults for a warm pool.
 *
 * @param warmPoolName            the {@code SandboxWarmPool} every claim points at ({@code spec.warmPoolRef.name});
 *                                required, a DNS-1123 name
 * @param apiVersion              the version of both agent-sandbox groups ({@code agents.x-k8s.io} for
 *                                {@code Sandbox}, {@code extensions.agents.x-k8s.io} for {@code SandboxClaim}); null
 *                                means {@value #DEFAULT_API_VERSION}
 * @param readyTimeout            how long to wait for the claim's {@code Ready} condition; null means 2 minutes
 * @param maxLifetime             when set, the claim's {@code lifecycle.shutdownTime} is this long after creation, so the
 *                                controller deletes the claim and its sandbox even if this JVM dies; null means none
 * @param ttlSecondsAfterFinished when set, {@code lifecycle.ttlSecondsAfterFinished}: how long the controller keeps a
 *                                claim whose pod finished; null means unset
 * @param containerName           the container to exec into; null means the pod's
 *                                {@code kubectl.kubernetes.io/default-container}, else its first container
 * @param runtimeClassName        when set, the claimed pod must run under this RuntimeClass (for example
 *                                {@code gvisor}); null means the runtime class is not checked
 * @param acceptTemplateAsIs      false (the default) refuses a claimed pod that lacks any of the engine's hardened
 *                                settings; true takes the operator's template as it is and only reports what it lacks
 */
record SandboxClaimSettings(String warmPoolName, String apiVersion, Duration readyTimeout, Duration maxLifetime,
                            Integer ttlSecondsAfterFinished, String containerName, String runtimeClassName,
                            boolean acceptTemplateAsIs) {

    /** The agent-sandbox API version served by its releases since v0.4 (v1alpha1 is still converted). */
    static final String DEFAULT_API_VERSION = "v1beta1";

    /** The default wait for a claim's {@code Ready} condition: a cold start pulls an image and schedules a pod. */
    static final Duration DEFAULT_READY_TIMEOUT = Duration.ofMinutes(2);

    private static final Pattern DNS_1123 = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern VERSION = Pattern.compile("v[0-9]+((alpha|beta)[0-9]+)?");

    SandboxClaimSettings {
        Objects.requireNonNull(warmPoolName, "warmPoolName");
        if (!DNS_1123.matcher(warmPoolName).matches()) {
            throw new IllegalArgumentException("warmPoolName (" + warmPoolName + ") must be a DNS-1123 name");
        }
        apiVersion = apiVersion == null ? DEFAULT_API_VERSION : apiVersion;
        if (!VERSION.matcher(apiVersion).matches()) {
            throw new IllegalArgumentException("apiVersion (" + apiVersion + ") must look like v1beta1");
        }
        readyTimeout = readyTimeout == null ? DEFAULT_READY_TIMEOUT : readyTimeout;
        if (readyTimeout.isNegative() || readyTimeout.isZero()) {
            throw new IllegalArgumentException("readyTimeout (" + readyTimeout + ") must be positive");
        }
        if (maxLifetime != null && (maxLifetime.isNegative() || maxLifetime.isZero())) {
            throw new IllegalArgumentException("maxLifetime (" + maxLifetime + ") must be positive");
        }
        if (ttlSecondsAfterFinished != null && ttlSecondsAfterFinished < 0) {
            throw new IllegalArgumentException(
                    "ttlSecondsAfterFinished (" + ttlSecondsAfterFinished + ") must not be negative");
        }
        if (containerName != null && !DNS_1123.matcher(containerName).matches()) {
            throw new IllegalArgumentException("containerName (" + containerName + ") must be a DNS-1123 label");
        }
        if (runtimeClassName != null && runtimeClassName.isBlank()) {
            throw new IllegalArgumentException("runtimeClassName must not be blank");
        }
    }

    /** The defaults for a warm pool: v1beta1, a 2 minute wait, no lifecycle, the default container, fail closed. */
    static SandboxClaimSettings of(String warmPoolName) {
        return new SandboxClaimSettings(warmPoolName, null, null, null, null, null, null, false);
    }

    /** {@code extensions.agents.x-k8s.io/<version>}: the group of {@code SandboxClaim}, {@code SandboxTemplate}, {@code SandboxWarmPool}. */
    String extensionsApiVersion() {
        return SandboxClaims.EXTENSIONS_GROUP + "/" + apiVersion;
    }

    /** {@code agents.x-k8s.io/<version>}: the group of {@code Sandbox}. */
    String coreApiVersion() {
        return SandboxClaims.CORE_GROUP + "/" + apiVersion;
    }
}
