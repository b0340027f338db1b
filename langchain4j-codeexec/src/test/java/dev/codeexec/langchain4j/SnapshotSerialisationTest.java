package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.workspace.snapshot.SnapshotEntry;
import dev.codeexec.workspace.snapshot.SnapshotManifest;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolProviderRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot and a run of the same workspace never interleave: both take the workspace's lock, so a snapshot sees a
 * file as it was before the run or after it, never half written, and the digest in its manifest is the digest of the
 * blob stored for it.
 */
class SnapshotSerialisationTest {

    private static final String PREFIX = "conversations/c1/";

    @TempDir
    Path tmp;

    private LocalEngine engine;
    private final InMemoryArtifactService artifacts = new InMemoryArtifactService();
    private CodeExecution codeExec;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().rootDir(tmp.resolve("engine")).build();
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build();
    }

    @AfterEach
    void tearDown() {
        codeExec.close();
        engine.close();
    }

    private ToolExecutionResult call(String tool, String json) {
        InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("c1")
                .invocationParameters(new InvocationParameters()).timestampNow().build();
        AiServiceTool t = codeExec.toolProvider().provideTools(ToolProviderRequest.builder().invocationContext(ctx)
                .userMessage(UserMessage.from("x")).build()).aiServiceTools().stream()
                .filter(x -> x.name().equals(tool)).findFirst().orElseThrow();
        return t.toolExecutor().executeWithContext(ToolExecutionRequest.builder().id("c").name(tool).arguments(json)
                .build(), ctx);
    }

    /** The host path of a file of conversation c1's workspace once it exists (the local engine's directory). */
    private Optional<Path> hostFile(String rel) throws IOException {
        try (Stream<Path> s = Files.walk(tmp.resolve("engine"))) {
            return s.filter(p -> p.toString().endsWith("/" + rel)).findFirst();
        }
    }

    @Test
    void should_see_the_file_after_the_run_when_a_snapshot_is_asked_for_while_a_run_is_half_way() throws Exception {
        codeExec.workspace("c1").putFile("work/f", "OLD");
        CompletableFuture<ToolExecutionResult> run = CompletableFuture.supplyAsync(() -> call("workspace_exec",
                "{\"command\":\"printf AAAA > work/f && touch work/started && "
                        + "while [ ! -e work/go ]; do sleep 0.01; done && printf BBBB >> work/f\","
                        + "\"timeout_seconds\":120}"));
        Path started = null;
        while (started == null) { // waits for a state, not for a time: the run is paused until work/go exists
            started = hostFile("work/started").orElse(null);
            Thread.sleep(5);
        }
        Path file = started.resolveSibling("f");
        // The positive control: the file is torn on disk while the run is paused; an unserialised reader sees AAAA.
        assertThat(Files.readString(file)).isEqualTo("AAAA");

        CompletableFuture<ToolExecutionResult> snap = CompletableFuture.supplyAsync(() -> call("workspace_snapshot",
                "{\"name\":\"s\"}"));
        assertThat(new WorkspaceSnapshots(artifacts, PREFIX).versions("s")).as("no snapshot while the run holds the "
                + "workspace").isEmpty();
        Files.createFile(started.resolveSibling("go"));

        assertThat(run.get(120, TimeUnit.SECONDS).resultText()).contains("exit_code: 0");
        assertThat(snap.get(120, TimeUnit.SECONDS).isError()).isFalse();
        SnapshotManifest m = new WorkspaceSnapshots(artifacts, PREFIX).manifest("s", null);
        assertThat(digestOf(m, "work/f")).isEqualTo(sha("AAAABBBB"));
        assertPackMatches(m, "s");
    }

    @Test
    void should_record_the_file_before_or_after_each_run_when_snapshots_race_with_runs() throws Exception {
        int n = 8;
        String previous = "initial";
        codeExec.workspace("c1").putFile("work/f", previous);
        for (int i = 0; i < n; i++) {
            char half1 = (char) ('a' + i);
            char half2 = (char) ('A' + i);
            String next = String.valueOf(half1).repeat(100_000) + String.valueOf(half2).repeat(100_000);
            CompletableFuture<ToolExecutionResult> run = CompletableFuture.supplyAsync(() -> call("workspace_exec",
                    "{\"command\":\"head -c 100000 /dev/zero | tr -c x " + half1 + " > work/f && "
                            + "head -c 100000 /dev/zero | tr -c x " + half2 + " >> work/f\"}"));
            CompletableFuture<ToolExecutionResult> snap = CompletableFuture.supplyAsync(() -> call(
                    "workspace_snapshot", "{\"name\":\"race\"}"));
            assertThat(run.get(120, TimeUnit.SECONDS).resultText()).contains("exit_code: 0");
            ToolExecutionResult s = snap.get(120, TimeUnit.SECONDS);
            assertThat(s.isError()).as(s.resultText()).isFalse();

            SnapshotManifest m = new WorkspaceSnapshots(artifacts, PREFIX).manifest("race", null);
            assertThat(digestOf(m, "work/f")).as("iteration %d", i).isIn(Set.of(sha(previous), sha(next)));
            assertPackMatches(m, "race");
            previous = next;
        }
    }

    private void assertPackMatches(SnapshotManifest m, String name) {
        byte[] pack = artifacts.load(PREFIX + "snapshots/packs/" + name, m.packVersion()).content();
        for (SnapshotEntry f : m.files()) {
            byte[] blob = java.util.Arrays.copyOfRange(pack, (int) f.offset(), (int) (f.offset() + f.size()));
            assertThat(sha(blob)).as(f.path()).isEqualTo(f.sha256());
        }
    }

    private static String digestOf(SnapshotManifest m, String path) {
        return m.files().stream().filter(e -> e.path().equals(path)).findFirst().orElseThrow().sha256();
    }

    private static String sha(String s) {
        return sha(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String sha(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
