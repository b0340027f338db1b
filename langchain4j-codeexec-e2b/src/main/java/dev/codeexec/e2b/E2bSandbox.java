package dev.codeexec.e2b;

import java.time.Instant;
import java.util.Map;

/**
 * A sandbox as the control plane describes it. Creation and connection answer with the addressing fields
 * ({@code Sandbox}); {@link E2bControlPlane#get} and {@link E2bControlPlane#list} add the state fields
 * ({@code SandboxDetail}, {@code ListedSandbox}), which are null otherwise. {@link #toString()} never shows the
 * tokens.
 *
 * @param sandboxId           the sandbox's id
 * @param templateId          the template it was created from
 * @param alias               the template's alias, or null
 * @param envdVersion         the version of envd inside, or null
 * @param envdAccessToken     the token envd requires ({@code X-Access-Token}), or null for an unsecured sandbox or an
 *                            answer that does not carry it
 * @param trafficAccessToken  the token for other ports when public traffic is off, or null
 * @param domain              the domain its traffic is reached under, or null for the configured one
 * @param state               {@code running} or {@code paused}, or null
 * @param startedAt           when it started, or null
 * @param endAt               when it times out, or null
 * @param metadata            its metadata (empty when not described)
 * @param allowInternetAccess whether its programs may reach the internet, or null when not described
 */
public record E2bSandbox(String sandboxId, String templateId, String alias, String envdVersion, String envdAccessToken,
                         String trafficAccessToken, String domain, String state, Instant startedAt, Instant endAt,
                         Map<String, String> metadata, Boolean allowInternetAccess) {

    public E2bSandbox {
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    @Override
    public String toString() {
        return "E2bSandbox{" + sandboxId + ", template=" + templateId + ", envd=" + envdVersion + ", state=" + state
                + ", endAt=" + endAt + ", domain=" + domain + ", envdAccessToken="
                + (envdAccessToken == null ? "none" : "****") + ", metadata=" + metadata + "}";
    }
}
