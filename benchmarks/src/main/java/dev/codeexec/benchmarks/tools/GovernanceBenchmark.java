package dev.codeexec.benchmarks.tools;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.AuditLogListener;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionApprovers;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.governance.micrometer.MicrometerExecutionListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.local.LocalEngine;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

/**
 * What governance costs a tool call: {@code workspace_exec} through the tool provider with an approver (an allow list,
 * which parses the command each call), the audit log's formatting and Micrometer metrics, against the same tool
 * without them and against the engine's runner running the same command line, in the same run.
 *
 * <p>The audit lines are formatted but not written (writing them is the logging backend's cost, not ours).
 *
 * <p>Then the same for {@code workspace_write_file}, a call that starts no process, where the governance's own cost
 * per call shows (in microseconds) instead of drowning in a program's start-up.
 *
 * <p>Usage: {@code GovernanceBenchmark [iterations] [command]}; samples rotate between the contenders so drift hits
 * all alike. Target: median ratio governed / plain tool at most 1.05 for a command.
 */
public final class GovernanceBenchmark {

    private GovernanceBenchmark() {
    }

    public static void main(String[] args) {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        String command = args.length > 1 ? args[1] : "echo hello";
        LongAdder audited = new LongAdder();
        AuditLogListener audit = AuditLogListener.create();
        ExecutionListener formatOnly = new ExecutionListener() {
            @Override
            public void onEvent(ExecutionEvent event) {
                audited.add(audit.format(event).length());
            }
        };
        ExecutionApprover approver = ExecutionApprovers.askOutsideAllowList(List.of("echo", "ls"),
                ExecutionApprover.of(r -> ApprovalDecision.deny("outside the list")));
        try (LocalEngine engine = LocalEngine.create();
             CodeExecution plain = CodeExecution.builder().engine(engine).build();
             CodeExecution governed = CodeExecution.builder().engine(engine).approver(approver)
                     .listener(formatOnly).listener(new MicrometerExecutionListener(new SimpleMeterRegistry()))
                     .build()) {
            Workspace ws = engine.manager().createWorkspace("bench-raw", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.shell(command).cleanEnv(true)
                    .timeout(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS)).build();
            AiServiceTool plainTool = exec(plain);
            AiServiceTool governedTool = exec(governed);
            InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                    .chatMemoryId("bench-tool").timestampNow().build();
            ToolExecutionRequest request = ToolExecutionRequest.builder().id("call_1").name("workspace_exec")
                    .arguments("{\"command\":\"" + command.replace("\"", "\\\"") + "\"}").build();

            for (int i = 0; i < 50; i++) {
                check(engine.runner().runProgram(ws, spec));
                check(plainTool.toolExecutor().executeWithContext(request, ctx));
                check(governedTool.toolExecutor().executeWithContext(request, ctx));
            }
            long[] raw = new long[iterations];
            long[] viaPlain = new long[iterations];
            long[] viaGoverned = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                for (int k = 0; k < 3; k++) {
                    switch ((i + k) % 3) {
                        case 0 -> {
                            long t0 = System.nanoTime();
                            RunResult r = engine.runner().runProgram(ws, spec);
                            raw[i] = System.nanoTime() - t0;
                            check(r);
                        }
                        case 1 -> {
                            long t0 = System.nanoTime();
                            ToolExecutionResult r = plainTool.toolExecutor().executeWithContext(request, ctx);
                            viaPlain[i] = System.nanoTime() - t0;
                            check(r);
                        }
                        default -> {
                            long t0 = System.nanoTime();
                            ToolExecutionResult r = governedTool.toolExecutor().executeWithContext(request, ctx);
                            viaGoverned[i] = System.nanoTime() - t0;
                            check(r);
                        }
                    }
                }
            }
            Stats sr = new Stats(raw);
            Stats sp = new Stats(viaPlain);
            Stats sg = new Stats(viaGoverned);
            System.out.println("command: bash -c '" + command + "', clean environment, " + iterations + " runs");
            System.out.println("engine runner (baseline)           " + sr);
            System.out.println("workspace_exec, no governance      " + sp);
            System.out.println("workspace_exec, approver+audit+metrics " + sg);
            System.out.println(String.format(Locale.ROOT, "ratio governed / plain tool:  %.3f (target <= 1.05)",
                    sg.median() / sp.median()));
            System.out.println(String.format(Locale.ROOT, "ratio governed / runner:      %.3f",
                    sg.median() / sr.median()));

            // A call without a process, so that the governance's own cost is not lost in a program's start-up.
            AiServiceTool plainWrite = tool(plain, "workspace_write_file");
            AiServiceTool governedWrite = tool(governed, "workspace_write_file");
            ToolExecutionRequest write = ToolExecutionRequest.builder().id("call_2").name("workspace_write_file")
                    .arguments("{\"path\":\"work/bench.txt\",\"content\":\"hello\"}").build();
            int writes = iterations * 10;
            for (int i = 0; i < 500; i++) {
                check(plainWrite.toolExecutor().executeWithContext(write, ctx));
                check(governedWrite.toolExecutor().executeWithContext(write, ctx));
            }
            long[] wPlain = new long[writes];
            long[] wGoverned = new long[writes];
            for (int i = 0; i < writes; i++) {
                boolean plainFirst = i % 2 == 0;
                for (int k = 0; k < 2; k++) {
                    boolean doPlain = (k == 0) == plainFirst;
                    long t0 = System.nanoTime();
                    ToolExecutionResult r = (doPlain ? plainWrite : governedWrite).toolExecutor()
                            .executeWithContext(write, ctx);
                    long took = System.nanoTime() - t0;
                    check(r);
                    (doPlain ? wPlain : wGoverned)[i] = took;
                }
            }
            Stats swp = new Stats(wPlain);
            Stats swg = new Stats(wGoverned);
            System.out.println("workspace_write_file, no governance " + swp);
            System.out.println("workspace_write_file, governed      " + swg);
            System.out.println(String.format(Locale.ROOT, "ratio governed / plain write: %.3f; added per call: "
                    + "%.0f us at the median, %.0f us at p10", swg.median() / swp.median(), swg.median() - swp.median(),
                    swg.percentile(10) - swp.percentile(10)));
            System.out.println("audit characters formatted: " + audited.sum());
        }
    }

    private static AiServiceTool exec(CodeExecution codeExec) {
        return tool(codeExec, "workspace_exec");
    }

    private static AiServiceTool tool(CodeExecution codeExec, String name) {
        return codeExec.toolProvider().provideTools(null).aiServiceTools().stream()
                .filter(t -> t.name().equals(name)).findFirst().orElseThrow();
    }

    private static void check(RunResult r) {
        if (r.exitCode() != 0) {
            throw new IllegalStateException("baseline run failed: " + r);
        }
    }

    private static void check(ToolExecutionResult r) {
        if (r.isError() || !(r.resultText().startsWith("exit_code: 0 ") || r.resultText().startsWith("overwrote") || r.resultText().startsWith("created"))) {
            throw new IllegalStateException("tool run failed: " + r.resultText());
        }
    }
}
