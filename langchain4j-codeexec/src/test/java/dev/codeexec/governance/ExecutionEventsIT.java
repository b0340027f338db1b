package dev.codeexec.governance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.governance.ExecutionEvent.ArtifactSaved;
import dev.codeexec.governance.ExecutionEvent.FileWritten;
import dev.codeexec.governance.ExecutionEvent.Refusal;
import dev.codeexec.governance.ExecutionEvent.RunFinished;
import dev.codeexec.governance.ExecutionEvent.RunStarted;
import dev.codeexec.governance.ExecutionEvent.SessionEnded;
import dev.codeexec.governance.ExecutionEvent.SessionStarted;
import dev.codeexec.governance.ExecutionEvent.WorkspaceClosed;
import dev.codeexec.governance.ExecutionEvent.WorkspaceCreated;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.testing.ExpectedLog;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.Queue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.SubstituteLogger;

/**
 * The execution events on the real local engine: what each tool call reports, with the conversation, tool and engine;
 * a listener that throws changes nothing; the audit log's lines hold no file contents, stdin or environment values.
 */
class ExecutionEventsIT {

    @TempDir
    Path base;

    private LocalEngine engine;
    private CodeExecution codeExec;
    private final RecordingListener events = new RecordingListener();

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().baseDir(base).build();
    }

    @AfterEach
    void tearDown() {
        if (codeExec != null) {
            codeExec.close();
        }
        engine.close();
    }

    private CodeExecution build(CodeExecution.Builder b) {
        codeExec = b.build();
        return codeExec;
    }

    private CodeExecution build() {
        return build(CodeExecution.builder().engine(engine).artifactService(new InMemoryArtifactService())
                .listener(events));
    }

    private ToolExecutionResult call(String tool, String json) {
        return ToolCalls.call(codeExec, "c1", tool, json);
    }

    @Test
    void should_report_the_workspace_and_each_run_with_its_outcome() {
        build();

        call("workspace_exec", "{\"command\":\"echo hi\"}");
        call("workspace_exec", "{\"command\":\"exit 3\"}");
        call("workspace_exec", "{\"command\":\"sleep 30\",\"timeout_seconds\":1}");
        call("execute_code", "{\"language\":\"bash\",\"code\":\"echo code\"}");
        codeExec.closeWorkspace("c1");

        List<ExecutionEvent> all = events.events();
        assertThat(all.get(0)).isInstanceOfSatisfying(WorkspaceCreated.class, e -> {
            assertThat(e.conversationId()).isEqualTo("c1");
            assertThat(e.toolName()).isEqualTo("workspace_exec");
            assertThat(e.engine()).isEqualTo(engine.name());
        });
        List<RunStarted> started = events.of(RunStarted.class);
        List<RunFinished> finished = events.of(RunFinished.class);
        assertThat(started).extracting(RunStarted::commandLine).containsExactly("echo hi", "exit 3", "sleep 30", null);
        assertThat(started.get(3).language()).isEqualTo("bash");
        assertThat(started.get(3).action()).isEqualTo(ExecutionAction.EXECUTE_CODE);
        assertThat(started.get(2).timeout()).hasSeconds(1);
        assertThat(finished).extracting(RunFinished::runId).containsExactlyElementsOf(
                started.stream().map(RunStarted::runId).toList());
        assertThat(finished).extracting(RunFinished::outcome).containsExactly(RunOutcome.SUCCESS,
                RunOutcome.NON_ZERO_EXIT, RunOutcome.TIMED_OUT, RunOutcome.SUCCESS);
        assertThat(finished.get(0).outputBytes()).isEqualTo(3);
        assertThat(finished.get(1).exitCode()).isEqualTo(3);
        assertThat(finished.get(2).timedOut()).isTrue();
        assertThat(finished.get(3).toolName()).isEqualTo("execute_code");
        assertThat(all.get(all.size() - 1)).isInstanceOfSatisfying(WorkspaceClosed.class, e -> {
            assertThat(e.reason()).isEqualTo(WorkspaceClosed.Reason.CLOSED);
            assertThat(e.toolName()).isNull();
        });
        assertThat(all).allSatisfy(e -> assertThat(e.conversationId()).isEqualTo("c1"));
    }

    @Test
    void should_report_files_artifacts_and_sessions() {
        build();

        call("workspace_write_file", "{\"path\":\"out/r.csv\",\"content\":\"a\\n1\\n\"}");
        call("workspace_save_artifact", "{\"path\":\"out/r.csv\"}");
        call("workspace_stage_artifact", "{\"ref\":\"artifact://r.csv\"}");
        String session = call("workspace_exec", "{\"command\":\"sleep 60\",\"background\":true,\"timeout_seconds\":90}")
                .attributes().get("session_id").toString();
        call("workspace_kill_session", "{\"session_id\":\"" + session + "\"}");

        assertThat(events.of(FileWritten.class)).extracting(FileWritten::path, FileWritten::sizeBytes, e -> e.toolName())
                .containsExactly(org.assertj.core.groups.Tuple.tuple("out/r.csv", 4L, "workspace_write_file"),
                        org.assertj.core.groups.Tuple.tuple("work/inputs/r.csv", 4L, "workspace_stage_artifact"));
        assertThat(events.of(ArtifactSaved.class)).singleElement().satisfies(e -> {
            assertThat(e.artifact()).isEqualTo("artifact://r.csv@1");
            assertThat(e.path()).isEqualTo("out/r.csv");
            assertThat(e.sizeBytes()).isEqualTo(4);
        });
        assertThat(events.of(SessionStarted.class)).singleElement().satisfies(e -> {
            assertThat(e.sessionId()).isEqualTo(session);
            assertThat(e.commandLine()).isEqualTo("sleep 60");
            assertThat(e.timeout()).hasSeconds(90);
        });
        assertThat(events.of(SessionEnded.class)).singleElement().satisfies(e -> {
            assertThat(e.sessionId()).isEqualTo(session);
            assertThat(e.toolName()).isEqualTo("workspace_exec");
        });
        assertThat(events.of(RunStarted.class)).as("a session is no foreground run").isEmpty();
    }

    @Test
    void should_report_each_kind_of_refusal() {
        build(CodeExecution.builder().engine(engine).listener(events)
                .commandPolicy(CommandPolicy.allowing("ln", "cat"))
                .approver(ExecutionApprover.of(r -> r.path().orElse("").contains("denied")
                        ? ApprovalDecision.deny("not there") : ApprovalDecision.allow())));

        call("workspace_exec", "{\"command\":\"curl http://127.0.0.1:9\"}");
        call("workspace_write_file", "{\"path\":\"work/denied.txt\",\"content\":\"x\"}");
        call("workspace_exec", "{\"command\":\"ln -s /etc work/etc\"}");
        call("workspace_read_file", "{\"path\":\"work/etc/hostname\"}");
        call("workspace_write_file", "{\"path\":\"work/ok.txt\",\"content\":\"x\"}");
        // Without a store the provider does not offer the artifact tools; the @Tool face still answers, refusing.
        codeExec.tools().workspaceSaveArtifact("work/ok.txt", null, InvocationContext.builder().chatMemoryId("c1").build());

        assertThat(events.of(Refusal.class)).extracting(Refusal::kind, Refusal::errorKind).containsExactly(
                org.assertj.core.groups.Tuple.tuple(RefusalKind.POLICY, "policy"),
                org.assertj.core.groups.Tuple.tuple(RefusalKind.APPROVAL, "not_approved"),
                org.assertj.core.groups.Tuple.tuple(RefusalKind.PATH, "path_escape"),
                org.assertj.core.groups.Tuple.tuple(RefusalKind.CAPABILITY, "unsupported"));
        assertThat(events.of(Refusal.class).get(1).reason()).startsWith("error: not approved: not there.");
        assertThat(events.of(Refusal.class)).allSatisfy(e -> assertThat(e.conversationId()).isEqualTo("c1"));
    }

    @Test
    void should_keep_runs_and_other_listeners_going_when_a_listener_throws() {
        ExecutionListener broken = new ExecutionListener() {
            @Override
            public void onEvent(ExecutionEvent event) {
                throw new IllegalStateException("listener bug");
            }
        };
        build(CodeExecution.builder().engine(engine).listener(broken).listener(events));

        ToolExecutionResult r;
        try (ExpectedLog log = ExpectedLog.capture()) {
            r = call("workspace_exec", "{\"command\":\"echo still-runs\"}");
            assertThat(log.text()).contains("threw on a workspace_created event").contains("listener bug");
        }

        assertThat(r.isError()).isFalse();
        assertThat(r.resultText()).contains("still-runs");
        assertThat(events.of(RunFinished.class)).singleElement()
                .satisfies(e -> assertThat(e.outcome()).isEqualTo(RunOutcome.SUCCESS));
    }

    @Test
    void should_write_one_audit_line_per_event_without_contents_stdin_or_environment_values() {
        Queue<SubstituteLoggingEvent> queue = new LinkedList<>();
        EventRecordingLogger logger = new EventRecordingLogger(new SubstituteLogger("audit", queue, false), queue);
        build(CodeExecution.builder().engine(engine).artifactService(new InMemoryArtifactService())
                .listener(AuditLogListener.create(logger)));

        call("workspace_exec", "{\"command\":\"cat; env | wc -l\",\"stdin\":\"stdin-secret\","
                + "\"env\":{\"MY_TOKEN\":\"env-secret\"}}");
        call("workspace_write_file", "{\"path\":\"work/f.txt\",\"content\":\"content-secret\"}");
        call("execute_code", "{\"language\":\"bash\",\"code\":\"echo code-secret\"}");

        List<String> lines = new ArrayList<>();
        queue.forEach(e -> lines.add(e.getMessage()));
        assertThat(lines).hasSize(6).allSatisfy(l -> assertThat(l).doesNotContain("secret").doesNotContain("MY_TOKEN")
                .doesNotContain("\n"));
        assertThat(lines.get(0)).startsWith("workspace_created conversation=c1 tool=workspace_exec engine=");
        assertThat(lines.get(1)).startsWith("run_started conversation=c1 tool=workspace_exec")
                .contains("command=\"cat; env | wc -l\"");
        assertThat(lines.get(2)).startsWith("run_finished").contains("outcome=success exit_code=0");
        assertThat(lines.get(3)).isEqualTo("file_written conversation=c1 tool=workspace_write_file engine="
                + engine.name() + " path=work/f.txt size_bytes=14");
        assertThat(lines.get(4)).contains("language=bash code_chars=16");
        assertThat(AuditLogListener.create(logger).withoutCommandLines().format(new RunStarted("c1", "workspace_exec",
                "local", java.time.Instant.now(), 1, ExecutionAction.RUN_COMMAND, "ls", null, 0,
                java.time.Duration.ofSeconds(1)))).doesNotContain("command=");
    }
}
