package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.exactly;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How many requests each operation makes, counted by WireMock (counts, never times): a run in steady state is one
 * {@code Process/Start}, whatever its working directory; a working directory the run refuses costs the Stats that
 * name the typed exception, and only then; a batch of files is two requests (the upload and the helper that checks
 * the targets and moves the files into place), whatever its paths.
 */
class E2bRequestCountsWireTest extends WireFixture {

    private Workspace ws;

    @BeforeEach
    void workspace() {
        stubs.sandbox();
        stubs.dir("work");
        stubs.dir("out");
        stubs.writes();
        engine = stubs.engine().build();
        ws = engine.manager().createWorkspace("counts", WorkspacePolicy.DEFAULT);
    }

    private void runs(String stdout, String stderr, int exit) {
        server.stubFor(WireStubs.start("--reuid=1000").willReturn(WireStubs.stream(Wire.concat(Wire.start(7),
                stdout.isEmpty() ? new byte[0] : Wire.stdout(stdout), stderr.isEmpty() ? new byte[0]
                        : Wire.stderr(stderr), Wire.exit(exit), Wire.end("{}")))));
    }

    private void warmRun() {
        // A workspace's first run also looks at its run history (every tenth run does): not the steady state.
        runs("ok\n", "", 0);
        engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());
        server.resetRequests();
    }

    @Test
    void should_make_one_request_per_run_in_the_workspace_root() {
        warmRun();

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());

        assertThat(r.stdout()).isEqualTo("ok\n");
        server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start")));
        server.verify(exactly(1), anyRequestedFor(anyUrl()));
    }

    @Test
    void should_make_one_request_per_run_in_a_working_directory() {
        warmRun();

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("true").cwd("work").build());

        assertThat(r.stdout()).isEqualTo("ok\n");
        server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start"))
                .withRequestBody(containing("\"work\"")));
        server.verify(exactly(0), postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
        server.verify(exactly(1), anyRequestedFor(anyUrl()));
    }

    @Test
    void should_name_a_refused_working_directory_with_a_typed_exception() {
        warmRun();
        runs("", SandboxScripts.CWD_REFUSED + "\n", SandboxScripts.CWD_REFUSED_STATUS);

        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").cwd("nope").build()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("cwd 'nope'");
        server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start")));
        server.verify(postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
    }

    @Test
    void should_put_one_file_in_two_requests() {
        server.resetRequests();

        engine.fs().putFiles(ws, List.of(PutFile.of("work/data.csv", "a,b\n")));

        server.verify(exactly(1), postRequestedFor(urlPathEqualTo("/files")));
        server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start"))
                .withRequestBody(containing("codeexec-isdir")));
        server.verify(exactly(0), postRequestedFor(urlEqualTo("/filesystem.Filesystem/Stat")));
        server.verify(exactly(0), postRequestedFor(urlEqualTo("/filesystem.Filesystem/MakeDir")));
        server.verify(exactly(2), anyRequestedFor(anyUrl()));
    }

    @Test
    void should_put_a_batch_into_new_directories_in_two_requests() {
        server.resetRequests();

        engine.fs().putFiles(ws, List.of(PutFile.of("work/new/a/one.csv", "1"), PutFile.of("out/two/two.csv", "2"),
                PutFile.of("top.txt", "3")));

        server.verify(exactly(1), postRequestedFor(urlPathEqualTo("/files")));
        server.verify(exactly(1), postRequestedFor(urlEqualTo("/process.Process/Start")));
        server.verify(exactly(2), anyRequestedFor(anyUrl()));
    }
}
