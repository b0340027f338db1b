package dev.codeexec.governance.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.local.LocalEngine;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The metrics of a few real tool calls on the local engine, read back from a {@link SimpleMeterRegistry}. */
class MicrometerExecutionListenerIT {

    @TempDir
    Path base;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private LocalEngine engine;
    private CodeExecution codeExec;

    @AfterEach
    void tearDown() {
        codeExec.close();
        engine.close();
    }

    @Test
    void should_count_and_time_runs_per_engine_and_outcome_and_count_refusals_files_and_workspaces() {
        engine = LocalEngine.builder().baseDir(base).build();
        codeExec = CodeExecution.builder().engine(engine).listener(new MicrometerExecutionListener(registry))
                .approver(ExecutionApprover.of(r -> r.commandLine().orElse("").contains("forbidden")
                        ? ApprovalDecision.deny("no") : ApprovalDecision.allow()))
                .build();
        String name = engine.name();

        ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"echo ok\"}");
        ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"echo ok again\"}");
        ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"exit 2\"}");
        ToolCalls.call(codeExec, "c1", "workspace_exec", "{\"command\":\"echo forbidden\"}");
        ToolCalls.call(codeExec, "c1", "workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"x\"}");
        codeExec.closeWorkspace("c1");

        assertThat(registry.get(MicrometerExecutionListener.RUNS).tags("engine", name, "action", "run_command",
                "outcome", "success").timer().count()).isEqualTo(2);
        assertThat(registry.get(MicrometerExecutionListener.RUNS).tags("outcome", "non_zero_exit").timer().count())
                .isEqualTo(1);
        assertThat(registry.get(MicrometerExecutionListener.RUNS).tags("outcome", "success").timer()
                .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)).isPositive();
        assertThat(registry.get(MicrometerExecutionListener.RUN_OUTPUT).tags("engine", name).summary().totalAmount())
                .isEqualTo("ok\n".length() + "ok again\n".length());
        assertThat(registry.get(MicrometerExecutionListener.RUNS_ACTIVE).tags("engine", name).gauge().value())
                .isZero();
        assertThat(registry.get(MicrometerExecutionListener.REFUSALS).tags("engine", name, "tool", "workspace_exec",
                "kind", "approval").counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerExecutionListener.FILES_WRITTEN).tags("engine", name).counter().count())
                .isEqualTo(1);
        assertThat(registry.get(MicrometerExecutionListener.WORKSPACES_CREATED).counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerExecutionListener.WORKSPACES_CLOSED).tags("reason", "closed").counter()
                .count()).isEqualTo(1);
    }
}
