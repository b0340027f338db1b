package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.WorkspaceGoneException;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one translator's table: every status E2B's control plane documents (401, 403, 404, 409, 410, 429, 500, 502,
 * 503, 504), on a request about a sandbox and on sandbox creation, with how many attempts each takes.
 */
class E2bErrorsTest extends WireFixture {

    private E2bControlPlane control;

    @BeforeEach
    void reset() {
        control = new E2bControlPlane(new E2bHttp(E2bConfig.builder().environment(java.util.Map.of()).apiKey("k")
                .apiUrl("http://localhost:" + server.port()).retries(3, Duration.ofMillis(1)).build()));
    }

    @ParameterizedTest(name = "{0} on {1} -> {2} after {3} attempt(s)")
    @CsvSource({
            "401, get,    E2bAuthenticationException,   1",
            "403, get,    E2bAuthenticationException,   1",
            "404, get,    E2bSandboxGoneException,      1",
            "410, get,    E2bSandboxGoneException,      1",
            "409, get,    E2bConflictException,         1",
            "429, get,    E2bRateLimitException,        3",
            "500, get,    E2bApiException,              3",
            "502, get,    E2bApiException,              3",
            "503, get,    E2bApiException,              3",
            "504, get,    E2bApiException,              3",
            "400, get,    E2bApiException,              1",
            "401, create, E2bAuthenticationException,   1",
            "404, create, E2bTemplateNotFoundException, 1",
            "429, create, E2bRateLimitException,        3",
            "500, create, E2bApiException,              3",
    })
    void should_map_each_status_to_its_exception(int status, String call, String type, int attempts) {
        server.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(status)
                .withHeader("Content-Type", "application/json")
                .withBody("{\"code\":" + status + ",\"message\":\"the server said " + status
                        + "\",\"error_code\":\"some_code\"}")));
        Consumer<E2bControlPlane> op = call.equals("get") ? c -> c.get("sb1")
                : c -> c.create(SandboxSpec.builder("no-such-template").build());

        Throwable t = catchThrowable(() -> op.accept(control));

        assertThat(t.getClass().getSimpleName()).isEqualTo(type);
        assertThat(t).hasMessageContaining("the server said " + status).hasMessageContaining("HTTP " + status);
        assertThat(((E2bError) t).httpStatus()).isEqualTo(status);
        assertThat(((E2bError) t).errorCode()).isEqualTo("some_code");
        if (t instanceof E2bSandboxGoneException g) {
            assertThat(g).isInstanceOf(WorkspaceGoneException.class);
            assertThat(g.sandboxId()).isEqualTo("sb1");
        }
        if (t instanceof E2bTemplateNotFoundException n) {
            assertThat(n.template()).isEqualTo("no-such-template");
        }
        // A creation that failed on the server's side is followed by a look for what it may have left.
        long posts = server.findAll(anyRequestedFor(anyUrl())).stream()
                .filter(r -> !r.getUrl().startsWith("/v2/sandboxes")).count();
        assertThat(posts).isEqualTo(attempts);
    }

    @org.junit.jupiter.api.Test
    void should_report_an_unreachable_api_as_unavailable_after_retrying_the_connection() {
        E2bControlPlane nowhere = new E2bControlPlane(new E2bHttp(E2bConfig.builder()
                .environment(java.util.Map.of()).apiKey("k").apiUrl("http://127.0.0.1:1")
                .retries(2, Duration.ofMillis(1)).build()));

        Throwable t = catchThrowable(() -> nowhere.get("sb1"));

        assertThat(t).isExactlyInstanceOf(E2bApiException.class).hasMessageContaining("127.0.0.1:1")
                .hasMessageContaining("2 attempts");
        assertThat(((E2bApiException) t).httpStatus()).isZero();
    }
}
