package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The order of the tool-call pipeline ({@link ToolPipeline}), seen from outside: approval before the workspace lock, a
 * denied call never near the lock, events after the run they report.
 */
class ToolPipelineTest {

    private final FakeEngine engine = new FakeEngine();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private CodeExecution codeExec;

    @AfterEach
    void close() {
        threads.shutdownNow();
        if (codeExec != null) {
            codeExec.close();
        }
    }

    /** Denies every command containing "deny", allows the rest. */
    private static final ExecutionApprover DENY_MARKED = r -> CompletableFuture.completedFuture(
            r.commandLine().orElse("").contains("deny") ? ApprovalDecision.deny("marked") : ApprovalDecision.allow());

    private static ExecutionListener listener(Consumer<ExecutionEvent> onEvent) {
        return new ExecutionListener() {
            @Override
            public void onEvent(ExecutionEvent event) {
                onEvent.accept(event);
            }
        };
    }

    private ToolExecutionResult call(String tool, String json) {
        return ToolCalls.call(codeExec, "c1", tool, json);
    }

    @Test
    void should_list_the_steps_in_the_documented_order_when_the_runtime_is_built() {
        codeExec = CodeExecution.builder().engine(engine).build();
        List<Class<?>> order = new ArrayList<>();
        codeExec.runtime().pipeline().steps().forEach(s -> order.add(s.getClass()));
        assertThat(order).containsExactly(EventsStep.class, ErrorsStep.class, EnabledStep.class, ResolveStep.class,
                ArgumentsStep.class, ApprovalStep.class, WorkspaceLockStep.class, AttachmentsStep.class,
                PolicyStep.class, ResultTextStep.class, ChangeTrackingStep.class, RunStep.class);
    }

    @Test
    void should_answer_a_denied_call_without_the_workspace_lock_when_another_call_holds_it() throws Exception {
        codeExec = CodeExecution.builder().engine(engine).approver(DENY_MARKED).build();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.program = (ws, spec) -> {
            if (String.valueOf(spec.args()).contains("hold")) {
                holding.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return new RunResult("ok\n", "", 0, Duration.ofMillis(5), false, false, false);
        };
        Future<?> holder = threads.submit(() -> codeExec.workspace("c1").runCommand("hold"));
        try {
            assertThat(holding.await(60, TimeUnit.SECONDS)).isTrue();
            // positive control: an approved call waits for the lock while the holder has it
            Future<ToolExecutionResult> allowed = threads.submit(() -> call("workspace_exec",
                    "{\"command\":\"echo allowed\"}"));
            // the denied call comes back while the lock is still held: it never waited for it
            ToolExecutionResult denied = threads.submit(() -> call("workspace_exec",
                    "{\"command\":\"echo deny\"}")).get(60, TimeUnit.SECONDS);
            assertThat(denied.resultText()).startsWith("error: not approved");
            assertThat(allowed).as("the lock is still held").isNotDone();
            release.countDown();
            assertThat(allowed.get(60, TimeUnit.SECONDS).resultText()).startsWith("exit_code: 0");
        } finally {
            release.countDown();
            holder.get(60, TimeUnit.SECONDS);
        }
        assertThat(engine.runs).noneMatch(s -> String.valueOf(s.args()).contains("deny"));
    }

    @Test
    void should_create_no_workspace_when_the_call_is_denied() {
        codeExec = CodeExecution.builder().engine(engine).approver(DENY_MARKED).build();

        assertThat(call("workspace_exec", "{\"command\":\"echo deny\"}").resultText()).startsWith("error: not approved");
        assertThat(engine.created).isEmpty();

        assertThat(call("workspace_exec", "{\"command\":\"echo ok\"}").resultText()).startsWith("exit_code: 0");
        assertThat(engine.created).hasSize(1);
    }

    @Test
    void should_ask_the_approver_before_taking_the_workspace_lock_when_a_call_is_approved() {
        // The approver uses the same workspace from application code, which takes its lock: if the call held it
        // already, the approval would wait until its timeout and the call would be denied.
        codeExec = CodeExecution.builder().engine(engine).approvalTimeout(Duration.ofSeconds(60)).approver(r -> {
            codeExec.workspace("c1").list(".");
            seen.add("the approver used the workspace");
            return CompletableFuture.completedFuture(ApprovalDecision.allow());
        }).build();

        assertThat(call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"x\"}").resultText())
                .startsWith("created work/a.txt");
        assertThat(call("workspace_exec", "{\"command\":\"echo hi\"}").resultText()).startsWith("exit_code: 0");
        assertThat(seen).hasSize(2);
    }

    @Test
    void should_report_events_after_the_work_they_describe_when_a_call_runs() {
        codeExec = CodeExecution.builder().engine(engine).listener(listener(e -> {
            if (e instanceof ExecutionEvent.RunFinished) {
                seen.add("run finished after " + engine.runs.size() + " run(s)");
            } else if (e instanceof ExecutionEvent.FileWritten f) {
                seen.add("file written: " + engine.files.values().stream().anyMatch(m -> m.containsKey(f.path())));
            } else {
                seen.add(e.type());
            }
        })).build();

        call("workspace_exec", "{\"command\":\"echo hi\"}");
        call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"x\"}");

        assertThat(seen).containsExactly("workspace_created", "run_started", "run finished after 1 run(s)",
                "file written: true");
    }

    @Test
    void should_report_a_refusal_and_no_run_when_the_call_is_denied() {
        List<ExecutionEvent> events = new CopyOnWriteArrayList<>();
        codeExec = CodeExecution.builder().engine(engine).approver(DENY_MARKED).listener(listener(events::add))
                .build();

        call("workspace_exec", "{\"command\":\"echo deny\"}");

        assertThat(events).singleElement().isInstanceOf(ExecutionEvent.Refusal.class);
        assertThat(engine.runs).isEmpty();
    }
}
