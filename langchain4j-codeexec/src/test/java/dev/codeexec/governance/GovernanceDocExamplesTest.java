package dev.codeexec.governance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.governance.micrometer.MicrometerExecutionListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.local.LocalEngine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snippets of docs/approval.md and docs/events.md, compiled and run. Keep them in step. */
class GovernanceDocExamplesTest {

    @TempDir
    Path dir;

    /** A stand-in for the application's UI: questions wait here until a human answers. */
    static final class ApprovalInbox {
        final Map<String, CompletableFuture<Boolean>> open = new ConcurrentHashMap<>();

        CompletionStage<Boolean> ask(String conversation, String command) {
            CompletableFuture<Boolean> answer = new CompletableFuture<>();
            open.put(command, answer);
            return answer;
        }
    }

    @Test
    void should_run_the_documented_approver() throws Exception {
        ApprovalInbox inbox = new ApprovalInbox();
        try (LocalEngine engine = LocalEngine.builder().baseDir(dir).build()) {
            // tag::approver[]
            ExecutionApprover human = request -> inbox.ask(request.conversationId(), request.commandLine()
                            .or(request::code).orElse(request.action().toString()))
                    .thenApply(yes -> yes ? ApprovalDecision.allow()
                            : ApprovalDecision.deny("the user did not approve this command"));

            ExecutionApprover approver = ExecutionApprovers.allOf(
                    ExecutionApprovers.denyNetworkEnabledRuns(),                       // only offline engines run code
                    ExecutionApprovers.askOutsideAllowList(List.of("ls", "cat", "wc"), human));

            CodeExecution codeExec = CodeExecution.builder()
                    .engine(engine)
                    .approver(approver)
                    .approvalTimeout(Duration.ofMinutes(2))   // then the call is denied
                    .build();
            // end::approver[]

            String result = ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"ls\"}").resultText();
            assertThat(result).contains("programs may only run where they have no network access");
            codeExec.close();

            CodeExecution humanOnly = CodeExecution.builder().engine(engine)
                    .approver(ExecutionApprovers.askOutsideAllowList(List.of("ls", "cat", "wc"), human)).build();
            assertThat(ToolCalls.call(humanOnly, "c1", "workspace_exec", "{\"command\":\"ls\"}").isError()).isFalse();
            CompletableFuture<String> asked = CompletableFuture.supplyAsync(() -> ToolCalls.call(humanOnly, "c1",
                    "workspace_exec", "{\"command\":\"touch work/x\"}").resultText());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!inbox.open.containsKey("touch work/x")) {
                assertThat(System.nanoTime()).as("the approver was asked within 60 s").isLessThan(deadline);
                Thread.sleep(10);
            }
            inbox.open.get("touch work/x").complete(false);
            assertThat(asked.get()).startsWith("error: not approved: the user did not approve this command.");
            humanOnly.close();
        }
    }

    @Test
    void should_run_the_documented_listeners() {
        MeterRegistry meterRegistry = new SimpleMeterRegistry();
        try (LocalEngine engine = LocalEngine.builder().baseDir(dir).build()) {
            // tag::listeners[]
            CodeExecution codeExec = CodeExecution.builder()
                    .engine(engine)
                    .listener(AuditLogListener.create())                          // one line per event: dev.codeexec.audit
                    .listener(new MicrometerExecutionListener(meterRegistry))    // needs micrometer-core
                    .listener(new ExecutionListener() {
                        @Override
                        public void runFinished(ExecutionEvent.RunFinished run) {
                            if (run.outcome() == RunOutcome.TIMED_OUT) {
                                System.out.println(run.conversationId() + ": a run timed out after "
                                        + run.duration().toSeconds() + " s");
                            }
                        }
                    })
                    .build();
            // end::listeners[]

            ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"echo hi\"}");
            assertThat(meterRegistry.get(MicrometerExecutionListener.RUNS).timer().count()).isEqualTo(1);
            codeExec.close();
        }
    }
}
