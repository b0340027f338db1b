package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a sandbox's ports are addressed, as E2B's SDKs do it (protocols.md A.2). */
class SandboxAddressTest {

    private static E2bSandbox sandbox(String domain, String token, String traffic) {
        return new E2bSandbox("sb123", "base", null, "0.2.4", token, traffic, domain, null, null, null, Map.of(), null);
    }

    private static E2bConfig config(Map<String, String> env) {
        java.util.Map<String, String> e = new java.util.HashMap<>(env);
        e.put("E2B_API_KEY", "k");
        return E2bConfig.builder().environment(e).build();
    }

    @Test
    void should_route_envd_by_header_on_e2bs_domains_and_by_host_elsewhere() {
        SandboxAddress onE2b = SandboxAddress.of(sandbox(null, "t", null), config(Map.of()));
        SandboxAddress own = SandboxAddress.of(sandbox("e2b.dev", "t", null), config(Map.of()));
        SandboxAddress selfHosted = SandboxAddress.of(sandbox(null, "t", null),
                config(Map.of("E2B_DOMAIN", "sandboxes.example.com")));

        assertThat(onE2b.envd("/files")).hasToString("https://sandbox.e2b.app/files");
        assertThat(own.envd("/files")).hasToString("https://sandbox.e2b.dev/files");
        assertThat(selfHosted.envd("/files")).hasToString("https://49983-sb123.sandboxes.example.com/files");
        assertThat(onE2b.interpreter("/execute")).hasToString("https://49999-sb123.e2b.app/execute");
    }

    @Test
    void should_use_one_sandbox_url_for_every_port_when_configured() {
        SandboxAddress a = SandboxAddress.of(sandbox("e2b.app", "t", null),
                config(Map.of("E2B_SANDBOX_URL", "http://127.0.0.1:9000")));

        assertThat(a.envd("/health")).hasToString("http://127.0.0.1:9000/health");
        assertThat(a.interpreter("/contexts")).hasToString("http://127.0.0.1:9000/contexts");
    }

    @Test
    void should_name_the_sandbox_and_port_and_send_the_tokens_where_they_belong() {
        SandboxAddress a = SandboxAddress.of(sandbox(null, "envd-token", "traffic-token"), config(Map.of()));

        var envd = a.headers(HttpRequest.newBuilder(a.envd("/x")), SandboxAddress.ENVD_PORT).build().headers();
        var ci = a.headers(HttpRequest.newBuilder(a.interpreter("/x")), SandboxAddress.INTERPRETER_PORT).build()
                .headers();

        assertThat(envd.firstValue("E2b-Sandbox-Id")).hasValue("sb123");
        assertThat(envd.firstValue("E2b-Sandbox-Port")).hasValue("49983");
        assertThat(envd.firstValue("X-Access-Token")).hasValue("envd-token");
        assertThat(envd.firstValue("E2B-Traffic-Access-Token")).isEmpty();
        assertThat(ci.firstValue("E2b-Sandbox-Port")).hasValue("49999");
        assertThat(ci.firstValue("E2B-Traffic-Access-Token")).hasValue("traffic-token");
        var unsecured = SandboxAddress.of(sandbox(null, null, null), config(Map.of()));
        assertThat(unsecured.headers(HttpRequest.newBuilder(unsecured.envd("/x")), SandboxAddress.ENVD_PORT).build()
                .headers().firstValue("X-Access-Token")).isEmpty();
    }
}
