package dev.codeexec.governance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The ready-made approvers, each decision with its opposite. */
class ExecutionApproversTest {

    /** An engine that only describes itself: approvers never run anything. */
    record DescribedEngine(Capabilities describe) implements Engine {
        @Override
        public String name() {
            return "described";
        }

        @Override
        public WorkspaceManager manager() {
            throw new UnsupportedOperationException();
        }

        @Override
        public WorkspaceFS fs() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ProgramRunner runner() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }

    static final Engine NETWORKED = new DescribedEngine(Capabilities.builder().isolation(Isolation.NONE)
            .networkAllowed(true).build());
    static final Engine OFFLINE = new DescribedEngine(Capabilities.builder().isolation(Isolation.CONTAINER)
            .networkAllowed(false).build());

    static ApprovalRequest command(Engine engine, String line) {
        return ApprovalRequest.builder(ExecutionAction.RUN_COMMAND, "workspace_exec", "c1", engine).commandLine(line)
                .timeout(Duration.ofSeconds(60)).build();
    }

    static ApprovalRequest of(ExecutionAction action, Engine engine) {
        return ApprovalRequest.builder(action, "tool", "c1", engine).timeout(Duration.ofSeconds(60)).build();
    }

    static ApprovalDecision decide(ExecutionApprover approver, ApprovalRequest request) throws Exception {
        return approver.review(request).toCompletableFuture().get(120, TimeUnit.SECONDS);
    }

    @Test
    void should_deny_runs_on_an_engine_with_network_and_allow_them_on_one_without() throws Exception {
        ExecutionApprover approver = ExecutionApprovers.denyNetworkEnabledRuns();

        assertThat(decide(approver, command(NETWORKED, "ls")).reason()).hasValueSatisfying(r ->
                assertThat(r).contains("no network access").contains("'described'"));
        assertThat(decide(approver, of(ExecutionAction.EXECUTE_CODE, NETWORKED)).isAllowed()).isFalse();
        assertThat(decide(approver, command(OFFLINE, "ls")).isAllowed()).isTrue();
        assertThat(decide(approver, of(ExecutionAction.WRITE_FILE, NETWORKED)).isAllowed())
                .as("a file write starts no program").isTrue();
    }

    @Test
    void should_allow_commands_on_the_list_and_ask_the_delegate_about_every_other_run() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        ExecutionApprover approver = ExecutionApprovers.askOutsideAllowList(List.of("ls", "cat"),
                ExecutionApprover.of(r -> {
                    asked.incrementAndGet();
                    return ApprovalDecision.deny("a human said no");
                }));

        assertThat(decide(approver, command(NETWORKED, "ls -la work | cat")).isAllowed()).isTrue();
        assertThat(asked).hasValue(0);

        for (String outside : List.of("rm -rf work", "/tmp/ls", "ls $(whoami)", "env ls", "ls > x")) {
            assertThat(decide(approver, command(NETWORKED, outside)).isAllowed()).as(outside).isFalse();
        }
        assertThat(decide(approver, of(ExecutionAction.EXECUTE_CODE, NETWORKED)).isAllowed()).isFalse();
        assertThat(asked).hasValue(6);
        assertThat(decide(approver, of(ExecutionAction.WRITE_FILE, NETWORKED)).isAllowed()).isTrue();
        assertThat(asked).hasValue(6);
    }

    @Test
    void should_stop_at_the_first_denial_and_merge_the_tightest_changes_when_all_allow() throws Exception {
        AtomicInteger laterAsked = new AtomicInteger();
        ExecutionApprover five = r -> CompletableFuture.supplyAsync(() ->
                ApprovalDecision.allowWith(RunChanges.shorterTimeout(Duration.ofSeconds(5))));
        ExecutionApprover two = ExecutionApprover.of(r ->
                ApprovalDecision.allowWith(RunChanges.shorterTimeout(Duration.ofSeconds(2))));
        ExecutionApprover later = ExecutionApprover.of(r -> {
            laterAsked.incrementAndGet();
            return ApprovalDecision.allow();
        });

        ApprovalDecision merged = decide(ExecutionApprovers.allOf(five, two, ExecutionApprover.allowAll()),
                command(NETWORKED, "ls"));
        ApprovalDecision denied = decide(ExecutionApprovers.allOf(ExecutionApprovers.denyNetworkEnabledRuns(), later),
                command(NETWORKED, "ls"));

        assertThat(merged.changes()).hasValueSatisfying(c -> assertThat(c.timeout()).hasValue(Duration.ofSeconds(2)));
        assertThat(denied.isAllowed()).isFalse();
        assertThat(laterAsked).hasValue(0);
        assertThat(decide(ExecutionApprovers.allOf(ExecutionApprover.allowAll()), command(NETWORKED, "ls")))
                .isEqualTo(ApprovalDecision.allow());
    }

    @Test
    void should_reject_decisions_that_say_nothing() {
        assertThatThrownBy(() -> ApprovalDecision.deny(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reason");
        assertThatThrownBy(() -> RunChanges.shorterTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
        assertThatThrownBy(() -> ExecutionApprovers.askOutsideAllowList(List.of(), ExecutionApprover.allowAll()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
