package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.deleteRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The control plane against E2B's REST API as its OpenAPI spec defines it, served by WireMock: request bodies and
 * headers field by field, answers as the API sends them, retries, and the cleanup of what a failed creation left.
 */
class E2bControlPlaneTest extends WireFixture {

    static final String SANDBOX = """
            {"templateID":"rki5dems9wqfm4r03t7g","sandboxID":"i1a2b3c4d5e6f7g8h9j0k","alias":"code-interpreter-v1",\
            "clientID":"6532622b","envdVersion":"0.2.4","envdAccessToken":"tok-123","trafficAccessToken":null,\
            "domain":null}""";

    private E2bControlPlane control;

    @BeforeEach
    void reset() {
        control = new E2bControlPlane(new E2bHttp(config(server)));
    }

    static E2bConfig config(WireMockServer server) {
        return E2bConfig.builder().environment(Map.of()).apiKey("e2b_test_key")
                .apiUrl("http://localhost:" + server.port()).retries(4, Duration.ofMillis(1)).build();
    }

    @Test
    void should_create_a_sandbox_with_internet_off_secure_and_tagged_when_asked_for_a_template() {
        server.stubFor(post("/sandboxes").willReturn(aResponse().withStatus(201)
                .withHeader("Content-Type", "application/json").withBody(SANDBOX)));

        E2bSandbox sb = control.create(SandboxSpec.builder("code-interpreter-v1").timeout(Duration.ofSeconds(90))
                .metadata(Map.of("app", "test")).envVars(Map.of("A", "1")).build());

        assertThat(sb.sandboxId()).isEqualTo("i1a2b3c4d5e6f7g8h9j0k");
        assertThat(sb.envdAccessToken()).isEqualTo("tok-123");
        assertThat(sb.envdVersion()).isEqualTo("0.2.4");
        assertThat(sb.toString()).doesNotContain("tok-123");
        server.verify(postRequestedFor(urlEqualTo("/sandboxes"))
                .withHeader("X-API-Key", equalTo("e2b_test_key"))
                .withHeader("Content-Type", equalTo("application/json"))
                .withRequestBody(matchingJsonPath("$.templateID", equalTo("code-interpreter-v1")))
                .withRequestBody(matchingJsonPath("$.timeout", equalTo("90")))
                .withRequestBody(matchingJsonPath("$.allow_internet_access", equalTo("false")))
                .withRequestBody(matchingJsonPath("$.secure", equalTo("true")))
                .withRequestBody(matchingJsonPath("$.autoPause", equalTo("false")))
                .withRequestBody(matchingJsonPath("$.metadata.app", equalTo("test")))
                .withRequestBody(matchingJsonPath("$.metadata['" + E2bControlPlane.CREATE_TAG + "']"))
                .withRequestBody(matchingJsonPath("$.envVars.A", equalTo("1"))));
    }

    @Test
    void should_connect_to_a_running_and_resume_a_paused_sandbox() {
        server.stubFor(post("/sandboxes/running1/connect").willReturn(aResponse().withStatus(200).withBody(SANDBOX)));
        server.stubFor(post("/sandboxes/paused1/connect").willReturn(aResponse().withStatus(201).withBody(SANDBOX)));

        assertThat(control.connect("running1", Duration.ofSeconds(60)).sandboxId()).isEqualTo("i1a2b3c4d5e6f7g8h9j0k");
        assertThat(control.resume("paused1", Duration.ofMillis(1500)).envdAccessToken()).isEqualTo("tok-123");

        server.verify(postRequestedFor(urlEqualTo("/sandboxes/running1/connect")).withRequestBody(
                equalToJson("{\"timeout\":60}")));
        server.verify(postRequestedFor(urlEqualTo("/sandboxes/paused1/connect")).withRequestBody(
                equalToJson("{\"timeout\":2}")));
    }

    @Test
    void should_set_the_timeout_pause_and_kill() {
        server.stubFor(post("/sandboxes/sb1/timeout").willReturn(aResponse().withStatus(204)));
        server.stubFor(post("/sandboxes/sb1/pause").willReturn(aResponse().withStatus(204)));
        server.stubFor(delete("/sandboxes/sb1").willReturn(aResponse().withStatus(204)));
        server.stubFor(delete("/sandboxes/gone1").willReturn(aResponse().withStatus(404)
                .withBody("{\"code\":404,\"message\":\"sandbox \\\"gone1\\\" not found\"}")));

        control.setTimeout("sb1", Duration.ofMinutes(10));
        control.pause("sb1");

        assertThat(control.kill("sb1")).isTrue();
        assertThat(control.kill("gone1")).isFalse();
        server.verify(postRequestedFor(urlEqualTo("/sandboxes/sb1/timeout")).withRequestBody(
                equalToJson("{\"timeout\":600}")));
    }

    @Test
    void should_describe_a_sandbox_with_its_state_and_end() {
        server.stubFor(get("/sandboxes/sb1").willReturn(aResponse().withStatus(200).withBody("""
                {"templateID":"base","sandboxID":"sb1","alias":"base","clientID":"x","startedAt":\
                "2025-06-01T10:00:00.123Z","endAt":"2025-06-01T10:05:00Z","envdVersion":"0.2.4","cpuCount":2,\
                "memoryMB":512,"diskSizeMB":1024,"metadata":{"dev.codeexec.engine":"e1"},"state":"paused",\
                "allowInternetAccess":false,"lifecycle":{"autoResume":false,"onTimeout":"kill"},"someNewField":1}""")));

        E2bSandbox sb = control.get("sb1");

        assertThat(sb.state()).isEqualTo("paused");
        assertThat(sb.endAt()).isEqualTo(Instant.parse("2025-06-01T10:05:00Z"));
        assertThat(sb.metadata()).containsEntry("dev.codeexec.engine", "e1");
        assertThat(sb.allowInternetAccess()).isFalse();
        assertThat(sb.envdAccessToken()).isNull();
    }

    @Test
    void should_list_by_metadata_across_pages() {
        server.stubFor(get(urlPathEqualTo("/v2/sandboxes")).withQueryParam("nextToken", equalTo("p2"))
                .willReturn(aResponse().withStatus(200).withBody("[{\"sandboxID\":\"b\",\"templateID\":\"base\"}]")));
        server.stubFor(get(urlPathEqualTo("/v2/sandboxes")).withQueryParam("metadata",
                        equalTo("dev.codeexec.engine=e%261&k=v"))
                .withQueryParam("nextToken", com.github.tomakehurst.wiremock.client.WireMock.absent())
                .willReturn(aResponse().withStatus(200).withHeader("X-Next-Token", "p2")
                        .withBody("[{\"sandboxID\":\"a\",\"templateID\":\"base\",\"state\":\"running\"}]")));

        List<E2bSandbox> found = control.list(new java.util.LinkedHashMap<>(Map.of("dev.codeexec.engine", "e&1")) {
            {
                put("k", "v");
            }
        });

        assertThat(found).extracting(E2bSandbox::sandboxId).containsExactly("a", "b");
        server.verify(getRequestedFor(urlPathEqualTo("/v2/sandboxes")).withQueryParam("state",
                equalTo("running,paused")));
    }

    @Test
    void should_retry_a_5xx_then_kill_what_the_failed_attempt_left() {
        server.stubFor(post("/sandboxes").inScenario("create").whenScenarioStateIs(Scenario.STARTED)
                .willReturn(aResponse().withStatus(502).withBody("upstream error")).willSetStateTo("second"));
        server.stubFor(post("/sandboxes").inScenario("create").whenScenarioStateIs("second")
                .willReturn(aResponse().withStatus(201).withBody(SANDBOX)));
        server.stubFor(get(urlPathEqualTo("/v2/sandboxes")).willReturn(aResponse().withStatus(200).withBody(
                "[{\"sandboxID\":\"leftover1\",\"templateID\":\"base\"},"
                        + "{\"sandboxID\":\"i1a2b3c4d5e6f7g8h9j0k\",\"templateID\":\"base\"}]")));
        server.stubFor(delete("/sandboxes/leftover1").willReturn(aResponse().withStatus(204)));

        E2bSandbox sb = control.create(SandboxSpec.builder("base").build());

        assertThat(sb.sandboxId()).isEqualTo("i1a2b3c4d5e6f7g8h9j0k");
        server.verify(2, postRequestedFor(urlEqualTo("/sandboxes")));
        server.verify(getRequestedFor(urlPathEqualTo("/v2/sandboxes")).withQueryParam("metadata",
                com.github.tomakehurst.wiremock.client.WireMock.matching(
                        "dev\\.codeexec\\.create=[0-9a-f-]{36}")));
        server.verify(deleteRequestedFor(urlEqualTo("/sandboxes/leftover1")));
        server.verify(0, deleteRequestedFor(urlEqualTo("/sandboxes/i1a2b3c4d5e6f7g8h9j0k")));
    }

    @Test
    void should_give_up_with_a_clear_error_after_a_5xx_storm_and_leave_no_sandbox() {
        server.stubFor(post("/sandboxes").willReturn(aResponse().withStatus(503)
                .withBody("{\"code\":503,\"message\":\"service unavailable\"}")));
        server.stubFor(get(urlPathEqualTo("/v2/sandboxes")).willReturn(aResponse().withStatus(200).withBody(
                "[{\"sandboxID\":\"half1\",\"templateID\":\"base\"}]")));
        server.stubFor(delete("/sandboxes/half1").willReturn(aResponse().withStatus(204)));

        assertThatThrownBy(() -> control.create(SandboxSpec.builder("base").build()))
                .isExactlyInstanceOf(E2bApiException.class)
                .hasMessageContaining("HTTP 503").hasMessageContaining("after 4 attempts")
                .hasMessageContaining("service unavailable")
                .satisfies(e -> assertThat(((E2bApiException) e).httpStatus()).isEqualTo(503));
        server.verify(4, postRequestedFor(urlEqualTo("/sandboxes")));
        server.verify(deleteRequestedFor(urlEqualTo("/sandboxes/half1")));
    }

    @Test
    void should_honour_retry_after_on_429_and_then_report_the_rate_limit() {
        server.stubFor(get("/sandboxes/sb1").willReturn(aResponse().withStatus(429).withHeader("Retry-After", "0")
                .withBody("{\"code\":429,\"message\":\"rate limit exceeded\"}")));

        assertThatThrownBy(() -> control.get("sb1")).isInstanceOf(E2bRateLimitException.class)
                .hasMessageContaining("rate limit exceeded");
        server.verify(4, getRequestedFor(urlEqualTo("/sandboxes/sb1")));
    }

    @Test
    void should_not_retry_a_pause_that_the_server_answered() {
        server.stubFor(post("/sandboxes/sb1/pause").willReturn(aResponse().withStatus(409)
                .withBody("{\"code\":409,\"message\":\"Sandbox sb1 is already paused\"}")));

        assertThatThrownBy(() -> control.pause("sb1")).isInstanceOf(E2bConflictException.class)
                .hasMessageContaining("already paused");
        server.verify(1, postRequestedFor(urlEqualTo("/sandboxes/sb1/pause")));
    }

    @Test
    void should_refuse_to_build_without_an_api_key_and_resolve_the_environment_like_the_sdks() {
        assertThatThrownBy(() -> E2bConfig.builder().environment(Map.of()).build())
                .isInstanceOf(E2bAuthenticationException.class).hasMessageContaining("E2B_API_KEY");

        E2bConfig fromEnv = E2bConfig.builder().environment(Map.of("E2B_API_KEY", "e2b_abcdefgh1234",
                "E2B_DOMAIN", "example.dev")).build();
        assertThat(fromEnv.apiUrl()).hasToString("https://api.example.dev");
        assertThat(fromEnv.sandboxUrl()).isNull();
        assertThat(fromEnv.toString()).doesNotContain("abcdefgh1234");
        E2bConfig overridden = E2bConfig.builder().environment(Map.of("E2B_API_KEY", "k", "E2B_API_URL",
                "http://127.0.0.1:3000/", "E2B_SANDBOX_URL", "http://127.0.0.1:49983")).build();
        assertThat(overridden.apiUrl()).hasToString("http://127.0.0.1:3000");
        assertThat(overridden.sandboxUrl()).hasToString("http://127.0.0.1:49983");
        assertThat(E2bConfig.builder().environment(Map.of("E2B_API_KEY", "k")).build().domain()).isEqualTo("e2b.app");
    }
}
