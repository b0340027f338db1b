package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
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
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.codeexec.FileRef;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * The engine against the wire format, served byte for byte by WireMock: create, put files, run, collect and kill;
 * the exact envelope and headers of a Start; base64 output, a keepalive, an omitted exit code, 64-bit sizes as
 * strings; and every failure of a stream: a timeout that must kill the remote process, an error inside an HTTP 200
 * stream, a stream cut short, a malformed envelope, a sandbox that expired during a run, the sandbox proxy's "not
 * found". No failure path leaves the sandbox running.
 */
class E2bWireTest extends WireFixture {

    private static JsonNode envelopeJson(LoggedRequest r) {
        byte[] body = r.getBody();
        assertThat(body[0]).as("flags of the request envelope").isZero();
        int len = java.nio.ByteBuffer.wrap(body, 1, 4).getInt();
        assertThat(len).as("length of the request envelope").isEqualTo(body.length - 5);
        return Json.parse(Arrays.copyOfRange(body, 5, body.length), "request");
    }

    private List<LoggedRequest> starts(String marker) {
        return server.findAll(postRequestedFor(urlEqualTo("/process.Process/Start"))).stream()
                .filter(r -> r.getBodyAsString().contains(marker)).toList();
    }

    @Test
    void should_create_put_run_collect_and_kill_over_the_wire_format() {
        stubs.sandbox();
        stubs.dir("work");
        stubs.dir("out");
        stubs.file("out/result.csv", 2);
        stubs.writes();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(412),
                Wire.stdout("hel"), Wire.keepalive(), Wire.stdout("lo\n"), Wire.stderr("oops\n"), Wire.exit(3),
                Wire.end("{}")))));
        server.stubFor(post("/filesystem.Filesystem/ListDir").willReturn(WireStubs.json(200, "{\"entries\":["
                + WireStubs.entryJson(WireStubs.ROOT + "/out/result.csv", "FILE_TYPE_FILE", 2, 0644) + "]}")));
        server.stubFor(WireStubs.start("codeexec-file").willReturn(WireStubs.stream(Wire.helper(413,
                "codeexec-file 2\nr\n", 0))));
        engine = stubs.engine().build();

        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);
        engine.fs().putFiles(ws, List.of(PutFile.of("work/data.csv", "a,b\n")));
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("work/x.py").build());
        List<FileRef> out = engine.fs().collect(ws, List.of("out/**"));
        engine.close();

        assertThat(r.stdout()).isEqualTo("hello\n");
        assertThat(r.stderr()).isEqualTo("oops\n");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.timedOut()).isFalse();
        assertThat(out).singleElement().satisfies(f -> {
            assertThat(f.name()).isEqualTo("out/result.csv");
            assertThat(f.contentAsString()).isEqualTo("r\n");
        });
        // The run: exactly one streaming request, its envelope and headers as envd expects them.
        LoggedRequest run = starts("--reuid=1000").get(0);
        assertThat(starts("--reuid=1000")).hasSize(1);
        JsonNode req = envelopeJson(run);
        assertThat(req.at("/process/cmd").asText()).isEqualTo("unshare");
        List<String> args = StreamSupport.stream(req.at("/process/args").spliterator(), false).map(JsonNode::asText)
                .toList();
        assertThat(args).startsWith("--pid", "--fork", "--kill-child", "--", "setpriv", "--reuid=1000",
                "--regid=1000", "--init-groups", "--", "/bin/sh", "-c");
        assertThat(args).containsSequence("env", "-i", "--").contains("PATH=/usr/local/bin:/usr/bin:/bin",
                "WORKSPACE_DIR=" + WireStubs.ROOT, "HOME=" + WireStubs.ROOT + "/home").endsWith("python3", "work/x.py");
        assertThat(req.at("/process/cwd").asText()).isEqualTo(WireStubs.ROOT);
        assertThat(req.get("stdin").asBoolean(true)).isFalse();
        assertThat(run.getHeader("Content-Type")).isEqualTo("application/connect+json");
        assertThat(run.getHeader("Connect-Protocol-Version")).isEqualTo("1");
        assertThat(run.getHeader("Connect-Timeout-Ms")).isEqualTo("90000"); // the run's 30 s + the 60 s backstop
        assertThat(run.getHeader("Keepalive-Ping-Interval")).isEqualTo("15");
        assertThat(run.getHeader("X-Access-Token")).isEqualTo(WireStubs.TOKEN);
        assertThat(run.getHeader("E2b-Sandbox-Id")).isEqualTo(WireStubs.ID);
        assertThat(run.getHeader("E2b-Sandbox-Port")).isEqualTo("49983");
        assertThat(run.getHeader("Authorization")).isEqualTo("Basic cm9vdDo="); // root: the namespace's launcher
        assertThat(run.containsHeader("X-API-Key")).as("the API key never goes to a sandbox").isFalse();
        // The upload: one multipart request for the batch, into the root-only staging directory.
        List<LoggedRequest> uploads = server.findAll(postRequestedFor(urlPathEqualTo("/files")));
        assertThat(uploads).hasSize(1);
        String upload = uploads.get(0).getBodyAsString();
        assertThat(uploads.get(0).queryParameter("username").firstValue()).isEqualTo("root");
        assertThat(uploads.get(0).getHeader("Content-Type")).startsWith("multipart/form-data; boundary=");
        assertThat(upload).contains("name=\"file\"; filename=\"/home/user/workspaces/.codeexec/")
                .contains("a,b\n").contains("0644 0 /home/user/workspaces/ws1/work/data.csv\n");
        assertThat(starts("codeexec-isdir")).hasSize(1);
        // The listing and the read: a program that checks the path and reads the file in one step, as the user.
        server.verify(postRequestedFor(urlEqualTo("/filesystem.Filesystem/ListDir"))
                .withRequestBody(equalToJson("{\"path\":\"" + WireStubs.ROOT + "/out\",\"depth\":65536}")));
        LoggedRequest read = starts("codeexec-file").get(0);
        assertThat(starts("codeexec-file")).hasSize(1);
        List<String> readArgs = StreamSupport.stream(envelopeJson(read).at("/process/args").spliterator(), false)
                .map(JsonNode::asText).toList();
        assertThat(readArgs).endsWith("sh", WireStubs.ROOT, "out/result.csv", "0", "-");
        assertThat(read.getHeader("Authorization")).isEqualTo("Basic dXNlcjo="); // user: the workspace user
        server.verify(0, getRequestedFor(urlPathEqualTo("/files")));
        server.verify(1, deleteRequestedFor(urlEqualTo("/sandboxes/" + WireStubs.ID)));
        server.verify(1, postRequestedFor(urlEqualTo("/sandboxes"))
                .withRequestBody(matchingJsonPath("$.allow_internet_access", equalTo("false")))
                .withRequestBody(matchingJsonPath("$.metadata['dev.codeexec.engine']", equalTo(engine.instanceId()))));
    }

    @Test
    void should_kill_the_remote_process_with_send_signal_when_the_run_times_out() {
        stubs.sandbox();
        stubs.signals();
        // The program does not end by itself within the run's timeout: its stream stays open for 4 s, then ends
        // as envd ends the stream of a killed program (the dribble also cuts envelopes across reads).
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(412),
                Wire.stdout("started\n"), Wire.keepalive(), Wire.exit(-1), Wire.end("{}")))
                .withChunkedDribbleDelay(12, 4000)));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sleep").args("600")
                .timeout(Duration.ofMillis(500)).build());

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        server.verify(1, postRequestedFor(urlEqualTo("/process.Process/SendSignal"))
                .withRequestBody(equalToJson("{\"process\":{\"pid\":412},\"signal\":\"SIGNAL_SIGKILL\"}"))
                .withHeader("X-Access-Token", equalTo(WireStubs.TOKEN)));
    }

    @Test
    void should_send_stdin_as_base64_then_close_it() {
        stubs.sandbox();
        server.stubFor(post("/process.Process/SendInput").willReturn(WireStubs.json(200, "{}")));
        server.stubFor(post("/process.Process/CloseStdin").willReturn(WireStubs.json(200, "{}")));
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(77),
                Wire.stdout("abc"), Wire.exit(0), Wire.end("{}"))).withChunkedDribbleDelay(4, 800)));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("cat").stdin("abc").build());

        assertThat(r.exitCode()).isZero();
        assertThat(envelopeJson(starts("--reuid=1000").get(0)).get("stdin").asBoolean()).isTrue();
        server.verify(postRequestedFor(urlEqualTo("/process.Process/SendInput")).withRequestBody(
                equalToJson("{\"process\":{\"pid\":77},\"input\":{\"stdin\":\"YWJj\"}}")));
        server.verify(postRequestedFor(urlEqualTo("/process.Process/CloseStdin")).withRequestBody(
                equalToJson("{\"process\":{\"pid\":77}}")));
    }

    @Test
    void should_report_an_error_inside_a_200_stream_and_kill_the_program() {
        stubs.sandbox();
        stubs.signals();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                Wire.stdout("partial\n"), Wire.end("{\"error\":{\"code\":\"internal\",\"message\":\"error sending "
                        + "data event: broken pipe\"}}")))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        Throwable t = catchThrowable(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()));

        // The program had started: its outcome is unknown, not "nothing ran".
        assertThat(t).isExactlyInstanceOf(RunOutcomeUnknownException.class).hasMessageContaining("internal");
        assertThat(((RunOutcomeUnknownException) t).partialResult().stdout()).isEqualTo("partial\n");
        assertThat(t.getCause()).isExactlyInstanceOf(E2bApiException.class);
        assertThat(((E2bApiException) t.getCause()).errorCode()).isEqualTo("internal");
        assertThat(((E2bApiException) t.getCause()).httpStatus()).isEqualTo(200);
        server.verify(1, postRequestedFor(urlEqualTo("/process.Process/SendSignal"))
                .withRequestBody(matchingJsonPath("$.signal", equalTo("SIGNAL_SIGKILL"))));
    }

    @Test
    void should_report_an_unknown_outcome_with_the_output_so_far_when_the_stream_is_cut_after_data_frames() {
        stubs.sandbox();
        stubs.signals();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                Wire.stdout("1 "), Wire.stdout("2 "), Wire.stderr("warn\n"), Wire.stdout("3 4\n")))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        Throwable t = catchThrowable(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("seq").build()));

        assertThat(t).isExactlyInstanceOf(RunOutcomeUnknownException.class).hasMessageContaining("started")
                .hasMessageContaining("unknown").isNotInstanceOf(BackendUnavailableException.class);
        assertThat(t.getCause()).isInstanceOf(E2bProtocolException.class).hasMessageContaining("end-of-stream");
        RunResult partial = ((RunOutcomeUnknownException) t).partialResult();
        assertThat(partial.stdout()).isEqualTo("1 2 3 4\n");
        assertThat(partial.stderr()).startsWith("warn\n");
        assertThat(partial.exitCode()).isEqualTo(-1);
        server.verify(1, postRequestedFor(urlEqualTo("/process.Process/SendSignal")));
    }

    @Test
    void should_return_the_result_when_the_same_stream_reaches_its_end() {
        stubs.sandbox();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                Wire.stdout("1 "), Wire.stdout("2 "), Wire.stderr("warn\n"), Wire.stdout("3 4\n"), Wire.exit(0),
                Wire.end("{}")))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("seq").build());

        assertThat(r.stdout()).isEqualTo("1 2 3 4\n");
        assertThat(r.stderr()).isEqualTo("warn\n");
        assertThat(r.exitCode()).isZero();
        server.verify(0, postRequestedFor(urlEqualTo("/process.Process/SendSignal")));
    }

    @Test
    void should_keep_the_result_when_the_stream_breaks_after_the_end_event() {
        stubs.sandbox();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                Wire.stdout("done\n"), Wire.exit(3)))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());

        assertThat(r.stdout()).isEqualTo("done\n");
        assertThat(r.exitCode()).isEqualTo(3);
    }

    @Test
    void should_say_backend_unavailable_when_the_stream_breaks_before_the_program_started() {
        stubs.sandbox();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(new byte[0])));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()))
                .isInstanceOf(BackendUnavailableException.class)
                .isNotInstanceOf(RunOutcomeUnknownException.class);
    }

    @Test
    void should_refuse_a_malformed_envelope_and_kill_the_program() {
        stubs.sandbox();
        stubs.signals();
        byte[] bad = {0x00, 0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                bad))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()))
                .isInstanceOf(RunOutcomeUnknownException.class).cause()
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("more than");
        server.verify(1, postRequestedFor(urlEqualTo("/process.Process/SendSignal")));
    }

    @Test
    void should_report_a_sandbox_that_expired_during_a_run_as_gone_and_fail_fast_afterwards() {
        stubs.sandbox();
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(5),
                Wire.stdout("working\n")))));
        server.stubFor(get("/sandboxes/" + WireStubs.ID).willReturn(WireStubs.json(404,
                "{\"code\":404,\"message\":\"sandbox \\\"" + WireStubs.ID + "\\\" doesn't exist or you don't have "
                        + "access to it\"}")));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        Throwable t = catchThrowable(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()));
        int requests = server.getAllServeEvents().size();
        Throwable next = catchThrowable(() -> engine.fs().list(ws, "work"));

        assertThat(t).isInstanceOf(E2bSandboxGoneException.class).isInstanceOf(WorkspaceGoneException.class);
        assertThat(((E2bSandboxGoneException) t).sandboxId()).isEqualTo(WireStubs.ID);
        assertThat(next).isInstanceOf(E2bSandboxGoneException.class);
        assertThat(server.getAllServeEvents()).as("a gone sandbox fails fast").hasSize(requests);
        server.verify(0, postRequestedFor(urlEqualTo("/process.Process/SendSignal")));
    }

    @Test
    void should_map_the_sandbox_proxys_not_found_answer_to_sandbox_gone() {
        stubs.sandbox();
        server.stubFor(post("/filesystem.Filesystem/Stat").atPriority(1).willReturn(WireStubs.json(502,
                "{\"sandboxId\":\"" + WireStubs.ID + "\",\"message\":\"The sandbox was not found\",\"code\":502}")));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        assertThatThrownBy(() -> engine.fs().readFile(ws, "work/a.txt", 0, 10))
                .isInstanceOf(E2bSandboxGoneException.class).hasMessageContaining(WireStubs.ID);
        server.verify(1, postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
    }

    @Test
    void should_kill_the_sandbox_when_its_setup_fails() {
        stubs.sandbox();
        server.stubFor(WireStubs.start("codeexec-root").atPriority(1).willReturn(WireStubs.stream(Wire.concat(
                Wire.start(101), Wire.stderr("unshare: unshare failed: Operation not permitted\n"), Wire.exit(12),
                Wire.end("{}")))));
        engine = stubs.engine().build();

        assertThatThrownBy(() -> engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT))
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("PID namespace")
                .hasMessageContaining("Operation not permitted");
        server.verify(1, deleteRequestedFor(urlEqualTo("/sandboxes/" + WireStubs.ID)));
    }

    @Test
    void should_refuse_an_unknown_template_with_its_own_error() {
        server.stubFor(post("/sandboxes").willReturn(WireStubs.json(404,
                "{\"code\":404,\"message\":\"template 'nope' not found\"}")));
        engine = stubs.engine().template("nope").build();

        assertThatThrownBy(() -> engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT))
                .isInstanceOf(E2bTemplateNotFoundException.class).hasMessageContaining("template 'nope' not found");
        server.verify(0, deleteRequestedFor(urlPathEqualTo("/sandboxes/" + WireStubs.ID)));
    }

    @Test
    void should_refuse_to_build_without_an_api_key() {
        assertThatThrownBy(() -> E2bEngine.builder().e2bVariables(java.util.Map.of()).build())
                .isInstanceOf(E2bAuthenticationException.class).hasMessageContaining("E2B_API_KEY");
    }

    @Test
    void should_retry_envd_through_a_5xx_storm_then_fail_clearly_and_still_kill_the_sandbox_at_close() {
        stubs.sandbox();
        server.stubFor(post("/filesystem.Filesystem/Stat").atPriority(1).willReturn(aResponse().withStatus(503)
                .withBody("upstream connect error or disconnect/reset before headers")));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        Throwable t = catchThrowable(() -> engine.fs().readFile(ws, "work/a.txt", 0, 10));
        engine.close();

        assertThat(t).isExactlyInstanceOf(E2bApiException.class).hasMessageContaining("unavailable")
                .hasMessageContaining("after 2 attempts");
        server.verify(2, postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
        server.verify(1, deleteRequestedFor(urlEqualTo("/sandboxes/" + WireStubs.ID)));
    }

    @Test
    void should_read_a_window_through_the_read_program() {
        stubs.sandbox();
        stubs.dir("work");
        stubs.file("work/a.txt", 10);
        server.stubFor(WireStubs.start("codeexec-file").willReturn(WireStubs.stream(Wire.helper(414,
                "codeexec-file 10\n234", 0))));
        engine = stubs.engine().build();
        Workspace ws = engine.manager().createWorkspace("wire", WorkspacePolicy.DEFAULT);

        FileRef w = engine.fs().readFile(ws, "work/a.txt", 2, 3);

        assertThat(w.contentAsString()).isEqualTo("234");
        assertThat(w.sizeBytes()).isEqualTo(10);
        assertThat(w.truncated()).isTrue();
        List<String> args = StreamSupport.stream(envelopeJson(starts("codeexec-file").get(0)).at("/process/args")
                .spliterator(), false).map(JsonNode::asText).toList();
        assertThat(args).endsWith("sh", WireStubs.ROOT, "work/a.txt", "2", "3");
    }
}
