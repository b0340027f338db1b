package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.PutFile;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ApprovalRequest;
import dev.codeexec.governance.ExecutionAction;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolProviderRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code workspace_snapshot} and {@code workspace_restore} on the local engine: result texts, the approval hook (a
 * denied call stores or writes nothing), events, offered only with an artifact store, forks into a new conversation,
 * and the {@code execute_code} description's statement about state.
 */
class SnapshotToolsTest {

    @TempDir
    Path tmp;

    private LocalEngine engine;
    private final InMemoryArtifactService artifacts = new InMemoryArtifactService();
    private final List<ExecutionEvent> events = new CopyOnWriteArrayList<>();
    private final List<ApprovalRequest> asked = new CopyOnWriteArrayList<>();
    private volatile boolean deny;
    private CodeExecution codeExec;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().rootDir(tmp.resolve("engine")).build();
        ExecutionApprover approver = ExecutionApprover.of(r -> {
            asked.add(r);
            return deny ? ApprovalDecision.deny("not today") : ApprovalDecision.allow();
        });
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).approver(approver)
                .listener(new ExecutionListener() {
                    @Override
                    public void onEvent(ExecutionEvent event) {
                        events.add(event);
                    }
                }).build();
    }

    @AfterEach
    void tearDown() {
        codeExec.close();
        engine.close();
    }

    private ToolExecutionResult call(CodeExecution ce, String conv, String tool, String json) {
        InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(conv)
                .invocationParameters(new InvocationParameters()).timestampNow().build();
        List<AiServiceTool> tools = ce.toolProvider().provideTools(ToolProviderRequest.builder()
                .invocationContext(ctx).userMessage(UserMessage.from("x")).build()).aiServiceTools();
        AiServiceTool t = tools.stream().filter(x -> x.name().equals(tool)).findFirst().orElseThrow();
        return t.toolExecutor().executeWithContext(ToolExecutionRequest.builder().id("c1").name(tool)
                .arguments(json).build(), ctx);
    }

    private String read(String conv, String path) {
        return new String(codeExec.workspace(conv).read(path, 0, 1 << 20).content(), StandardCharsets.UTF_8);
    }

    @Test
    void should_answer_with_name_version_count_and_bytes_when_a_snapshot_is_taken_and_restored() {
        codeExec.workspace("c1").putFiles(List.of(PutFile.of("work/a.txt", "alpha"), PutFile.of("out/b.txt", "bb")));

        ToolExecutionResult snap = call(codeExec, "c1", "workspace_snapshot", "{\"name\":\"before\"}");
        codeExec.workspace("c1").putFile("work/a.txt", "overwritten");
        ToolExecutionResult restore = call(codeExec, "c1", "workspace_restore", "{\"name\":\"before\"}");

        assertThat(snap.isError()).as(snap.resultText()).isFalse();
        assertThat(snap.resultText()).contains("saved snapshot before@1: 2 files, 7 bytes")
                .contains("workspace_restore name=before version=1").contains("Not carried")
                .contains("kernel memory");
        assertThat(snap.attributes()).containsEntry("version", 1).containsEntry("files", 2);
        assertThat(artifacts.names()).anyMatch(n -> n.equals("conversations/c1/snapshots/manifests/before"));
        assertThat(restore.isError()).as(restore.resultText()).isFalse();
        assertThat(restore.resultText()).contains("restored before@1: 2 files, 7 bytes").contains("clean")
                .contains("A snapshot never carries");
        assertThat(read("c1", "work/a.txt")).isEqualTo("alpha");
    }

    @Test
    void should_store_nothing_when_the_approver_denies_a_snapshot() {
        codeExec.workspace("c1").putFile("work/a.txt", "alpha");
        deny = true;

        ToolExecutionResult r = call(codeExec, "c1", "workspace_snapshot", "{\"name\":\"s\"}");

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("not approved");
        assertThat(artifacts.names()).isEmpty();
        assertThat(asked).extracting(ApprovalRequest::action).containsExactly(ExecutionAction.SNAPSHOT_WORKSPACE);
        // The control: approved, the same call stores the snapshot.
        deny = false;
        assertThat(call(codeExec, "c1", "workspace_snapshot", "{\"name\":\"s\"}").isError()).isFalse();
        assertThat(artifacts.names()).isNotEmpty();
    }

    @Test
    void should_write_nothing_when_the_approver_denies_a_restore() {
        codeExec.workspace("c1").putFile("work/a.txt", "alpha");
        call(codeExec, "c1", "workspace_snapshot", "{\"name\":\"s\"}");
        codeExec.workspace("c1").putFile("work/a.txt", "changed");
        deny = true;

        ToolExecutionResult r = call(codeExec, "c1", "workspace_restore", "{\"name\":\"s\",\"version\":1}");

        assertThat(r.isError()).isTrue();
        assertThat(read("c1", "work/a.txt")).isEqualTo("changed");
        assertThat(asked.get(asked.size() - 1).action()).isEqualTo(ExecutionAction.RESTORE_WORKSPACE);
        assertThat(asked.get(asked.size() - 1).artifact()).contains("s@1");
    }

    @Test
    void should_report_a_saved_snapshot_and_a_restore_as_events() {
        codeExec.workspace("c1").putFile("work/a.txt", "alpha");

        call(codeExec, "c1", "workspace_snapshot", "{\"name\":\"s\"}");
        call(codeExec, "c1", "workspace_restore", "{\"name\":\"s\"}");

        assertThat(events).filteredOn(e -> e instanceof ExecutionEvent.ArtifactSaved)
                .singleElement().satisfies(e -> {
                    ExecutionEvent.ArtifactSaved a = (ExecutionEvent.ArtifactSaved) e;
                    assertThat(a.toolName()).isEqualTo("workspace_snapshot");
                    assertThat(a.artifact()).isEqualTo("snapshot:s@1");
                    assertThat(a.sizeBytes()).isEqualTo(5);
                });
        assertThat(events).filteredOn(e -> e instanceof ExecutionEvent.FileWritten)
                .singleElement().satisfies(e -> assertThat(((ExecutionEvent.FileWritten) e).toolName())
                        .isEqualTo("workspace_restore"));
    }

    @Test
    void should_refuse_with_not_found_when_the_snapshot_does_not_exist() {
        ToolExecutionResult r = call(codeExec, "c1", "workspace_restore", "{\"name\":\"nope\"}");

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("snapshot 'nope' does not exist").contains("workspace_snapshot");
    }

    @Test
    void should_refuse_a_snapshot_over_the_bound_with_the_bound_named() {
        try (CodeExecution small = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .snapshotOptions(SnapshotOptions.builder().maxTotalBytes(3).build()).build()) {
            small.workspace("c9").putFile("work/a.txt", "alpha");

            ToolExecutionResult r = call(small, "c9", "workspace_snapshot", "{}");

            assertThat(r.isError()).isTrue();
            assertThat(r.resultText()).contains("maxTotalBytes = 3").contains("5 bytes");
            assertThat(artifacts.names()).isEmpty();
        }
    }

    @Test
    void should_fork_a_conversation_into_a_new_one_with_its_files() {
        codeExec.workspace("c1").putFiles(List.of(PutFile.of("work/model.py", "x = 1\n"),
                PutFile.of("out/chart.txt", "chart")));

        RestoreReceipt receipt = codeExec.fork("c1", "c2");

        assertThat(receipt.clean()).as(receipt.summary()).isTrue();
        assertThat(receipt.filesRestored()).isEqualTo(2);
        assertThat(read("c2", "work/model.py")).isEqualTo("x = 1\n");
        // The fork is independent: a change in c2 does not reach c1.
        codeExec.workspace("c2").putFile("work/model.py", "x = 2\n");
        assertThat(read("c1", "work/model.py")).isEqualTo("x = 1\n");
    }

    @Test
    void should_not_offer_the_snapshot_tools_when_no_artifact_store_is_configured() {
        try (CodeExecution bare = CodeExecution.builder().engine(engine).build()) {
            InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("c")
                    .invocationParameters(new InvocationParameters()).timestampNow().build();
            List<String> names = bare.toolProvider().provideTools(ToolProviderRequest.builder()
                    .invocationContext(ctx).userMessage(UserMessage.from("x")).build()).aiServiceTools().stream()
                    .map(AiServiceTool::name).toList();

            assertThat(names).doesNotContain("workspace_snapshot", "workspace_restore").contains("workspace_exec");
        }
        assertThat(toolNames(codeExec)).contains("workspace_snapshot", "workspace_restore");
    }

    @Test
    void should_tell_the_model_whether_python_state_persists_when_describing_execute_code() {
        FakeEngine fresh = new FakeEngine();
        FakeEngine kernel = new FakeEngine();
        kernel.capabilities = Capabilities.builder().supportsCleanEnv(true).statefulCells(true).build();
        try (CodeExecution a = CodeExecution.builder().engine(fresh).build();
             CodeExecution b = CodeExecution.builder().engine(kernel).build()) {
            assertThat(description(a, "execute_code")).contains("fresh process")
                    .doesNotContain("persist from one block");
            assertThat(description(b, "execute_code")).contains("variables, imports and loaded data persist")
                    .doesNotContain("fresh process");
        }
    }

    private static List<String> toolNames(CodeExecution ce) {
        return ce.toolProvider().provideTools(null).aiServiceTools().stream().map(AiServiceTool::name).toList();
    }

    private static String description(CodeExecution ce, String tool) {
        return ce.toolProvider().provideTools(null).aiServiceTools().stream().filter(t -> t.name().equals(tool))
                .findFirst().orElseThrow().toolSpecification().description();
    }
}
