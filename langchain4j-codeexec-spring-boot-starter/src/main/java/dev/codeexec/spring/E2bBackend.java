package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.e2b.WorkspaceMode;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code codeexec.backend=e2b}; loaded only when the E2B module is present. */
final class E2bBackend {

    private E2bBackend() {
    }

    /**
     * @param variables the {@code E2B_*} variables as the application's environment has them (the engine's defaults
     *                  for what the properties leave unset)
     * @throws InvalidConfigurationPropertyValueException without an API key, or for a value out of range; the key
     *                                                    itself is never part of a message
     */
    static E2bEngine create(E2bProperties p, ArtifactService artifacts, Map<String, String> variables,
                            NetworkSettings network, NetworkProperties networkProperties) {
        if (blank(p.getApiKey()) && blank(variables.get("E2B_API_KEY"))) {
            // Checked here, not left to the engine, so that the message names the property as well as the variable.
            throw new InvalidConfigurationPropertyValueException("codeexec.e2b.api-key", null, "the e2b backend needs "
                    + "an E2B API key: set codeexec.e2b.api-key or the environment variable E2B_API_KEY (keys are in "
                    + "the E2B dashboard, https://e2b.dev/dashboard)");
        }
        E2bEngine.Builder b = E2bEngine.builder().e2bVariables(variables).artifactService(artifacts)
                .internetAccess(p.isInternetAccess()).metadata(p.getMetadata());
        if (network.hasPolicy()) {
            if (p.isInternetAccess()) {
                throw new InvalidConfigurationPropertyValueException("codeexec.e2b.internet-access", true, "an egress "
                        + "policy (codeexec.network.*) is set too: internet access allows every host, the policy only "
                        + "its rules. Set one of them (codeexec.network.allow-others=true allows every public host)");
            }
            if (NetworkSettings.proxySettingsSet(networkProperties)) {
                throw new InvalidConfigurationPropertyValueException("codeexec.network.*", "limits or approval-timeout",
                        "the e2b backend hands the egress policy to E2B's firewall, which has no connection or byte "
                                + "limits, timeouts or approvals: remove codeexec.network.max-connections, max-bytes, "
                                + "idle-timeout, connect-timeout and approval-timeout");
            }
            b.egress(network.policy());
        }
        if (!blank(p.getApiKey())) {
            b.apiKey(p.getApiKey());
        }
        if (!blank(p.getDomain())) {
            b.domain(p.getDomain());
        }
        if (!blank(p.getApiUrl())) {
            b.apiUrl(p.getApiUrl());
        }
        if (!blank(p.getSandboxUrl())) {
            b.sandboxUrl(p.getSandboxUrl());
        }
        if (!blank(p.getTemplate())) {
            b.template(p.getTemplate().strip());
        }
        if (p.getWorkspaceMode() != null) {
            b.workspaceMode(mode(p.getWorkspaceMode()));
        }
        if (!blank(p.getSharedSandboxId())) {
            b.sharedSandbox(p.getSharedSandboxId().strip());
        }
        if (p.getSandboxTimeout() != null) {
            if (p.getSandboxTimeout().compareTo(Duration.ofSeconds(10)) < 0) {
                throw new InvalidConfigurationPropertyValueException("codeexec.e2b.sandbox-timeout",
                        p.getSandboxTimeout(), "must be at least 10 seconds");
            }
            b.sandboxTimeout(p.getSandboxTimeout());
        }
        if (p.getRequestTimeout() != null) {
            if (p.getRequestTimeout().isNegative() || p.getRequestTimeout().isZero()) {
                throw new InvalidConfigurationPropertyValueException("codeexec.e2b.request-timeout",
                        p.getRequestTimeout(), "must be positive");
            }
            b.requestTimeout(p.getRequestTimeout());
        }
        if (!blank(p.getUser())) {
            b.user(p.getUser().strip());
        }
        if (!blank(p.getBaseDir())) {
            b.baseDir(p.getBaseDir().strip());
        }
        if (p.getCodeInterpreter() != null) {
            b.codeInterpreter(p.getCodeInterpreter());
        }
        return b.build();
    }

    /** {@code sandbox-per-workspace} or {@code shared-sandbox} (case, blanks and '_' for '-' accepted). */
    private static WorkspaceMode mode(String value) {
        String v = value.strip().toLowerCase(Locale.ROOT).replace('_', '-');
        for (WorkspaceMode m : WorkspaceMode.values()) {
            if (m.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(v)) {
                return m;
            }
        }
        throw new InvalidConfigurationPropertyValueException("codeexec.e2b.workspace-mode", value,
                "use sandbox-per-workspace or shared-sandbox");
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
