package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.stubbing.Scenario;
import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Python cells against the code interpreter's wire format (e2b-dev/code-interpreter {@code template/server}): a
 * context per workspace ({@code POST /contexts}), {@code POST /execute} answered with newline-delimited JSON as the
 * server writes it ({@code json.dumps}, so {@code ", "} and {@code ": "}), keepalives, images in base64, a traceback
 * with ANSI colours, the end of execution; and a context the server lost, an answer cut short, a template without an
 * interpreter.
 */
class E2bInterpreterWireTest extends WireFixture {

    /** A 1x1 PNG. */
    static final String PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    private Workspace ws;

    @BeforeEach
    void reset() {
        stubs.sandbox();
        stubs.dir("out");
        stubs.writes();
        server.stubFor(post("/filesystem.Filesystem/ListDir").willReturn(WireStubs.json(200, "{\"entries\":[]}")));
        server.stubFor(post("/contexts").willReturn(WireStubs.json(200,
                "{\"id\": \"ctx-1\", \"language\": \"python\", \"cwd\": \"" + WireStubs.ROOT + "/work\"}")));
        engine = stubs.engine().build();
        ws = engine.manager().createWorkspace("cells", WorkspacePolicy.DEFAULT);
    }

    private static String lines(String... items) {
        return String.join("\n", items) + "\n";
    }

    private CodeExecutionResult cell(String code) {
        return engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", code)));
    }

    @Test
    void should_run_a_cell_and_save_its_image_as_a_file() {
        server.stubFor(post("/execute").willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody(lines(
                        "{\"type\": \"number_of_executions\", \"execution_count\": 1}",
                        "{\"type\": \"stdout\", \"text\": \"hello\\n\", \"timestamp\": "
                                + "\"2025-06-01T10:00:00.123456+00:00\"}",
                        "{\"type\": \"keepalive\"}",
                        "{\"type\": \"result\", \"text\": \"<Figure size 640x480 with 1 Axes>\", \"png\": \"" + PNG
                                + "\", \"is_main_result\": false}",
                        "{\"type\": \"result\", \"text\": \"42\", \"is_main_result\": true}",
                        "{\"type\": \"some_future_item\", \"x\": 1}",
                        "{\"type\": \"end_of_execution\"}"))));

        CodeExecutionResult r = cell("print('hello')\nplot()\n6*7");

        assertThat(r.exitCode()).isZero();
        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).isEqualTo("hello\n[display saved as out/display_1.png (image/png, 70 bytes)]\n42\n");
        server.verify(postRequestedFor(urlEqualTo("/contexts"))
                .withRequestBody(equalToJson("{\"cwd\":\"" + WireStubs.ROOT + "/work\",\"language\":\"python\"}"))
                .withHeader("E2b-Sandbox-Port", equalTo("49999"))
                .withHeader("E2b-Sandbox-Id", equalTo(WireStubs.ID))
                .withHeader("X-Access-Token", equalTo(WireStubs.TOKEN)));
        server.verify(postRequestedFor(urlEqualTo("/execute"))
                .withRequestBody(matchingJsonPath("$.code", equalTo("print('hello')\nplot()\n6*7")))
                .withRequestBody(matchingJsonPath("$.context_id", equalTo("ctx-1")))
                .withRequestBody(matchingJsonPath("$.env_vars.WORKSPACE_DIR", equalTo(WireStubs.ROOT)))
                .withRequestBody(matchingJsonPath("$.env_vars.OUTPUT_DIR", equalTo(WireStubs.ROOT + "/out"))));
        String upload = new String(server.findAll(postRequestedFor(urlPathEqualTo("/files"))).get(0).getBody(),
                StandardCharsets.ISO_8859_1);
        assertThat(upload).contains(new String(Base64.getDecoder().decode(PNG), StandardCharsets.ISO_8859_1))
                .contains(WireStubs.ROOT + "/out/display_1.png");
    }

    @Test
    void should_report_a_raised_exception_with_its_traceback_and_no_colours() {
        server.stubFor(post("/execute").willReturn(aResponse().withStatus(200).withBody(lines(
                "{\"type\": \"number_of_executions\", \"execution_count\": 2}",
                "{\"type\": \"error\", \"name\": \"ZeroDivisionError\", \"value\": \"division by zero\", \"traceback\":"
                        + " \"\\u001b[0;31m------\\u001b[0m\\n\\u001b[0;31mZeroDivisionError\\u001b[0m: division by "
                        + "zero\"}",
                "{\"type\": \"end_of_execution\"}"))));

        CodeExecutionResult r = cell("1/0");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.output()).isEqualTo("------\nZeroDivisionError: division by zero\n").doesNotContain("\u001b");
    }

    @Test
    void should_create_a_new_context_when_the_interpreter_lost_it_and_say_so() {
        server.stubFor(post("/execute").inScenario("lost").whenScenarioStateIs(Scenario.STARTED)
                .willReturn(WireStubs.json(200, lines("{\"type\": \"stdout\", \"text\": \"first\\n\", "
                        + "\"timestamp\": \"2025-06-01T10:00:00+00:00\"}", "{\"type\": \"end_of_execution\"}")))
                .willSetStateTo("restarted"));
        server.stubFor(post("/execute").inScenario("lost").whenScenarioStateIs("restarted")
                .willReturn(aResponse().withStatus(404).withHeader("Content-Type", "text/plain; charset=utf-8")
                        .withBody("Context ctx-1 not found")).willSetStateTo("recreated"));
        server.stubFor(post("/execute").inScenario("lost").whenScenarioStateIs("recreated")
                .willReturn(WireStubs.json(200, lines("{\"type\": \"stdout\", \"text\": \"second\\n\", "
                        + "\"timestamp\": \"2025-06-01T10:00:01+00:00\"}", "{\"type\": \"end_of_execution\"}"))));

        assertThat(cell("print('first')").output()).isEqualTo("first\n");
        CodeExecutionResult r = cell("print('second')");

        assertThat(r.output()).contains("a new one was created").endsWith("second\n");
        server.verify(2, postRequestedFor(urlEqualTo("/contexts")));
    }

    @Test
    void should_refuse_an_answer_cut_short_before_the_end_of_execution() {
        server.stubFor(post("/execute").willReturn(WireStubs.json(200,
                lines("{\"type\": \"stdout\", \"text\": \"partial\\n\", \"timestamp\": \"2025-06-01T10:00:00+00:00\"}")
                        + "{\"type\": \"res")));

        assertThatThrownBy(() -> cell("print('x')")).isInstanceOf(E2bProtocolException.class);
    }

    @Test
    void should_say_that_a_template_without_a_code_interpreter_has_none() {
        server.stubFor(post("/contexts").willReturn(WireStubs.json(502, "{\"sandboxId\":\"" + WireStubs.ID
                + "\",\"message\":\"The sandbox is running but port is not open\",\"port\":49999,\"code\":502}")));

        assertThatThrownBy(() -> cell("print('x')")).isInstanceOf(E2bApiException.class)
                .hasMessageContaining("no code interpreter");
    }
}
