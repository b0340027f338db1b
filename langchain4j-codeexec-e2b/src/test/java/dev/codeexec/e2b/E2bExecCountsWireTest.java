package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.exactly;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.codeexec.langchain4j.CodeExecution;
import dev.langchain4j.invocation.InvocationContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The requests of a {@code workspace_exec} tool call in steady state (the conversation's second), counted by WireMock
 * (counts, never times): one {@code Process/Start}, whose stream carries the program's output and the listing of
 * {@code work/} and {@code out/} that the change report compares; no ListDir, no Stat. The first call of a
 * conversation still looks at the folders itself (its tracker starts from a look).
 */
class E2bExecCountsWireTest {

    private WireMockServer server;
    private WireStubs stubs;

    @BeforeEach
    void start() {
        server = new WireMockServer(wireMockConfig().dynamicPort().extensions(new ListingStarts()));
        server.start();
        stubs = new WireStubs(server);
        stubs.sandbox();
        stubs.dir("work");
        stubs.dir("out");
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(new byte[0])
                .withTransformers(ListingStarts.NAME)));
        server.stubFor(post("/filesystem.Filesystem/ListDir").willReturn(WireStubs.json(200, "{\"entries\":[]}")));
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    @Test
    void should_make_one_request_per_workspace_exec_in_steady_state() {
        try (E2bEngine engine = stubs.engine().build();
             CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            InvocationContext ctx = InvocationContext.builder().chatMemoryId("counts").build();
            String first = codeExec.tools().workspaceExec("true", null, null, null, null, null, ctx);
            assertThat(first).startsWith("exit_code: 0");
            server.verify(postRequestedFor(urlEqualTo("/filesystem.Filesystem/ListDir"))); // the first look
            server.resetRequests();

            String second = codeExec.tools().workspaceExec("true", null, null, null, null, null, ctx);

            assertThat(second).startsWith("exit_code: 0").contains("ok").doesNotContain("codeexec-listing");
            server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start")));
            server.verify(exactly(0), postRequestedFor(urlEqualTo("/filesystem.Filesystem/ListDir")));
            server.verify(exactly(0), postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
            server.verify(exactly(1), anyRequestedFor(anyUrl()));
        }
    }
}
