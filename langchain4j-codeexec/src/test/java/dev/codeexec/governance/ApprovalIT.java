package dev.codeexec.governance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The approver on the real local engine: a denial runs and writes nothing (the marker a command or write would create
 * does not exist), each paired with the same call allowed; asynchronous approval that holds up no other conversation;
 * an approver that never answers, throws, or tries to loosen a limit; tightening changes that apply.
 */
class ApprovalIT {

    @TempDir
    Path base;

    private LocalEngine engine;
    private CodeExecution codeExec;
    private final List<ApprovalRequest> seen = new CopyOnWriteArrayList<>();

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

    private CodeExecution build(ExecutionApprover approver) {
        return build(CodeExecution.builder().engine(engine).artifactService(new InMemoryArtifactService())
                .approver(approver));
    }

    private CodeExecution build(CodeExecution.Builder builder) {
        codeExec = builder.build();
        return codeExec;
    }

    private ToolExecutionResult call(String conversation, String tool, String json) {
        return ToolCalls.call(codeExec, conversation, tool, json);
    }

    /** Whether a file of this name exists anywhere under the engine's base directory. */
    private boolean exists(String fileName) {
        try (Stream<Path> files = Files.walk(base)) {
            return files.anyMatch(p -> p.getFileName().toString().equals(fileName));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ExecutionApprover denyingRunsOf(String word) {
        return ExecutionApprover.of(r -> {
            seen.add(r);
            return r.commandLine().orElse(r.code().orElse("")).contains(word)
                    ? ApprovalDecision.deny("creating markers is not approved") : ApprovalDecision.allow();
        });
    }

    @Test
    void should_run_nothing_when_the_approver_denies_a_command_and_run_it_when_allowed() {
        build(denyingRunsOf("denied"));

        ToolExecutionResult denied = call("c1", "workspace_exec", "{\"command\":\"touch work/denied-marker\"}");
        ToolExecutionResult allowed = call("c1", "workspace_exec", "{\"command\":\"touch work/allowed-marker\"}");

        assertThat(denied.isError()).isTrue();
        assertThat(denied.resultText()).startsWith("error: not approved: creating markers is not approved. Nothing "
                + "was run or changed");
        assertThat(denied.attributes()).containsEntry("error", "not_approved");
        assertThat(exists("denied-marker")).as("a denied command runs nothing").isFalse();
        assertThat(allowed.isError()).isFalse();
        assertThat(exists("allowed-marker")).as("positive control: the same call, allowed, runs").isTrue();

        ApprovalRequest first = seen.get(0);
        assertThat(first.action()).isEqualTo(ExecutionAction.RUN_COMMAND);
        assertThat(first.toolName()).isEqualTo("workspace_exec");
        assertThat(first.conversationId()).isEqualTo("c1");
        assertThat(first.commandLine()).hasValue("touch work/denied-marker");
        assertThat(first.timeout()).hasValue(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS));
        assertThat(first.engine()).isSameAs(engine);
        assertThat(first.capabilities()).isEqualTo(engine.describe());
        assertThat(first.workspace()).as("the first call of a conversation has no workspace yet").isEmpty();
        assertThat(first.parsedCommand()).as("no policy, no parsed command").isEmpty();
        assertThat(seen.get(1).workspace()).as("a denied call created no workspace").isEmpty();
        call("c1", "workspace_exec", "{\"command\":\"true\"}");
        assertThat(seen.get(2).workspace()).as("a later call sees the workspace the allowed one created").isPresent();
    }

    @Test
    void should_write_nothing_when_the_approver_denies_a_file_write_and_write_when_allowed() {
        build(ExecutionApprover.of(r -> {
            seen.add(r);
            return r.path().orElse("").contains("denied") ? ApprovalDecision.deny("no writes there")
                    : ApprovalDecision.allow();
        }));

        ToolExecutionResult denied = call("c1", "workspace_write_file",
                "{\"path\":\"work/denied.txt\",\"content\":\"hello\"}");
        ToolExecutionResult allowed = call("c1", "workspace_write_file",
                "{\"path\":\"work/allowed.txt\",\"content\":\"hello\"}");

        assertThat(denied.resultText()).startsWith("error: not approved: no writes there.");
        assertThat(exists("denied.txt")).isFalse();
        assertThat(allowed.isError()).isFalse();
        assertThat(exists("allowed.txt")).isTrue();
        assertThat(seen.get(0).action()).isEqualTo(ExecutionAction.WRITE_FILE);
        assertThat(seen.get(0).path()).hasValue("work/denied.txt");
        assertThat(seen.get(0).contentBytes()).hasValue(5);
    }

    @Test
    void should_run_no_code_when_the_approver_denies_a_snippet() {
        build(denyingRunsOf("denied"));

        ToolExecutionResult denied = call("c1", "execute_code",
                "{\"language\":\"bash\",\"code\":\"touch denied-code-marker\"}");
        ToolExecutionResult allowed = call("c1", "execute_code",
                "{\"language\":\"bash\",\"code\":\"touch allowed-code-marker\"}");

        assertThat(denied.attributes()).containsEntry("error", "not_approved");
        assertThat(exists("denied-code-marker")).isFalse();
        assertThat(allowed.isError()).as(allowed.resultText()).isFalse();
        assertThat(exists("allowed-code-marker")).isTrue();
        assertThat(seen.get(0).action()).isEqualTo(ExecutionAction.EXECUTE_CODE);
        assertThat(seen.get(0).language()).hasValue("bash");
        assertThat(seen.get(0).code()).hasValue("touch denied-code-marker");
    }

    @Test
    void should_show_the_parsed_command_when_a_policy_is_set_and_ask_only_after_the_policy_accepted() {
        build(CodeExecution.builder().engine(engine).commandPolicy(CommandPolicy.allowing("touch", "ls"))
                .approver(ExecutionApprover.of(r -> {
                    seen.add(r);
                    return ApprovalDecision.allow();
                })));

        ToolExecutionResult refused = call("c1", "workspace_exec", "{\"command\":\"rm -rf work\"}");
        ToolExecutionResult ran = call("c1", "workspace_exec", "{\"command\":\"touch work/m1 && ls work\"}");

        assertThat(refused.attributes()).containsEntry("error", "policy");
        assertThat(ran.isError()).as(ran.resultText()).isFalse();
        assertThat(seen).as("the policy's refusal bothered no approver").hasSize(1);
        assertThat(seen.get(0).parsedCommand()).hasValueSatisfying(p ->
                assertThat(p.commands()).containsExactly("touch", "ls"));
    }

    @Test
    void should_not_hold_other_conversations_while_one_waits_for_approval() throws Exception {
        CompletableFuture<ApprovalDecision> slowAnswer = new CompletableFuture<>();
        CountDownLatch asked = new CountDownLatch(1);
        build(request -> {
            if (request.conversationId().equals("waiting")) {
                asked.countDown();
                return slowAnswer;
            }
            return CompletableFuture.completedFuture(ApprovalDecision.allow());
        });
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<ToolExecutionResult> waiting = pool.submit(() -> call("waiting", "workspace_exec",
                    "{\"command\":\"touch work/waiting-marker\"}"));
            assertThat(asked.await(60, TimeUnit.SECONDS)).isTrue();

            Future<ToolExecutionResult> other = pool.submit(() -> call("other", "workspace_exec",
                    "{\"command\":\"touch work/other-marker\"}"));
            ToolExecutionResult otherResult = other.get(60, TimeUnit.SECONDS);

            assertThat(otherResult.isError()).as(otherResult.resultText()).isFalse();
            assertThat(exists("other-marker")).isTrue();
            assertThat(waiting.isDone()).as("the waiting call still waits for its approval").isFalse();
            assertThat(exists("waiting-marker")).isFalse();

            slowAnswer.complete(ApprovalDecision.allow());
            assertThat(waiting.get(60, TimeUnit.SECONDS).isError()).isFalse();
            assertThat(exists("waiting-marker")).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void should_deny_when_no_answer_comes_within_the_approval_timeout() {
        CompletableFuture<ApprovalDecision> never = new CompletableFuture<>();
        build(CodeExecution.builder().engine(engine).approver(r -> never).approvalTimeout(Duration.ofMillis(200)));

        ToolExecutionResult r = call("c1", "workspace_exec", "{\"command\":\"touch work/late-marker\"}");

        assertThat(r.resultText()).startsWith("error: not approved: no approval came within 200 ms, so the call was "
                + "refused. Nothing was run or changed");
        assertThat(never).as("the unanswered approval is cancelled").isCancelled();
        assertThat(exists("late-marker")).isFalse();
    }

    @Test
    void should_deny_when_an_approver_blocks_in_review_and_interrupt_it() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        build(CodeExecution.builder().engine(engine).approvalTimeout(Duration.ofMillis(200))
                .approver(ExecutionApprover.of(r -> {
                    try {
                        never.await();
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                    }
                    return ApprovalDecision.allow();
                })));

        ToolExecutionResult r = call("c1", "workspace_exec", "{\"command\":\"touch work/blocked-marker\"}");

        assertThat(r.resultText()).startsWith("error: not approved: no approval came within 200 ms");
        assertThat(interrupted.await(60, TimeUnit.SECONDS)).as("the blocked approver was interrupted").isTrue();
        assertThat(exists("blocked-marker")).isFalse();
    }

    @Test
    void should_deny_with_a_clear_result_when_the_approver_throws_fails_or_answers_null() {
        List<ExecutionApprover> broken = List.of(
                r -> {
                    throw new IllegalStateException("approval service down");
                },
                r -> CompletableFuture.failedFuture(new IllegalStateException("approval service down")),
                r -> null,
                r -> CompletableFuture.completedFuture(null));
        for (ExecutionApprover approver : broken) {
            build(approver);

            ToolExecutionResult r = call("c1", "workspace_exec", "{\"command\":\"touch work/broken-marker\"}");

            assertThat(r.resultText()).startsWith("error: not approved: the approval check failed, so the call was "
                    + "refused. Nothing was run or changed").doesNotContain("approval service down");
            assertThat(exists("broken-marker")).isFalse();
            codeExec.close();
        }
    }

    @Test
    void should_refuse_changes_that_loosen_a_limit_and_apply_changes_that_tighten_it() {
        build(ExecutionApprover.of(r -> ApprovalDecision.allowWith(RunChanges.shorterTimeout(
                r.commandLine().orElse("").contains("loosen") ? Duration.ofSeconds(120) : Duration.ofSeconds(1)))));

        ToolExecutionResult loosened = call("c1", "workspace_exec",
                "{\"command\":\"touch work/loosen-marker\",\"timeout_seconds\":60}");
        ToolExecutionResult tightened = call("c1", "workspace_exec",
                "{\"command\":\"sleep 30; touch work/tight-marker\",\"timeout_seconds\":60}");

        assertThat(loosened.resultText()).startsWith("error: not approved: the approver's changes would raise the "
                + "time limit from 60 seconds to 120 seconds, and approvals may only tighten limits");
        assertThat(exists("loosen-marker")).isFalse();
        assertThat(tightened.attributes()).as("the approver's 1 s limit applies").containsEntry("timed_out", true);
        assertThat(exists("tight-marker")).isFalse();
    }

    @Test
    void should_refuse_changes_to_a_call_that_runs_no_program() {
        build(ExecutionApprover.of(r -> ApprovalDecision.allowWith(RunChanges.shorterTimeout(Duration.ofSeconds(1)))));

        ToolExecutionResult r = call("c1", "workspace_write_file", "{\"path\":\"work/w.txt\",\"content\":\"x\"}");

        assertThat(r.resultText()).contains("do not apply to this call");
        assertThat(exists("w.txt")).isFalse();
    }

    @Test
    void should_ask_before_saving_and_staging_artifacts() {
        build(ExecutionApprover.of(r -> {
            seen.add(r);
            return r.action() == ExecutionAction.SAVE_ARTIFACT ? ApprovalDecision.deny("artifacts are reviewed")
                    : ApprovalDecision.allow();
        }));
        call("c1", "workspace_write_file", "{\"path\":\"out/r.csv\",\"content\":\"a\\n1\\n\"}");

        ToolExecutionResult saved = call("c1", "workspace_save_artifact", "{\"path\":\"out/r.csv\",\"name\":\"r1.csv\"}");

        assertThat(saved.attributes()).containsEntry("error", "not_approved");
        assertThat(seen.get(1).path()).hasValue("out/r.csv");
        assertThat(seen.get(1).artifact()).hasValue("r1.csv");
        assertThat(ToolCalls.call(codeExec, "c1", "workspace_stage_artifact", "{\"ref\":\"artifact://r1.csv\"}")
                .attributes()).as("nothing was saved, so there is nothing to stage").containsEntry("error", "not_found");
    }

    @Test
    void should_let_the_model_see_the_denial_when_the_response_processor_runs_a_lone_code_block() {
        try (ScriptedOpenAi openAi = new ScriptedOpenAi()) {
            openAi.script(req -> {
                String tool = ScriptedOpenAi.lastToolResult(req);
                return tool == null ? Reply.text("```bash\ntouch block-marker\n```")
                        : Reply.text("I could not run it: " + tool);
            });
            build(denyingRunsOf("block-marker"));
            Assistant assistant = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider())
                    .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20)).build();

            String answer = assistant.chat("c1", "make a marker");

            assertThat(answer).startsWith("I could not run it: error: not approved: creating markers is not approved.");
            assertThat(exists("block-marker")).isFalse();
            assertThat(seen).singleElement().satisfies(r -> {
                assertThat(r.action()).isEqualTo(ExecutionAction.EXECUTE_CODE);
                assertThat(r.toolName()).isEqualTo("execute_code");
            });
        }
    }

    interface Assistant {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    @Test
    void should_ask_nothing_for_reads_and_listings() {
        build(ExecutionApprover.of(r -> {
            seen.add(r);
            return ApprovalDecision.deny("no");
        }));

        call("c1", "workspace_list_files", "{}");
        call("c1", "workspace_read_file", "{\"path\":\"work/none.txt\"}");

        assertThat(seen).isEmpty();
    }
}
