package dev.codeexec.benchmarks.tools;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.local.LocalEngine;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;

/**
 * The tool layer's cost: {@code workspace_exec} through the {@code @Tool} method and through the tool provider's
 * executor (JSON arguments), against the engine's runner running the same command line the same way
 * ({@code bash -c}, clean environment, same timeout) in a workspace of the same engine, in the same run.
 *
 * <p>What the tool adds on top of the run: argument validation, the conversation's workspace lookup and lock, two
 * workspace listings (to report changed files) and formatting the result text.
 *
 * <p>Usage: {@code WorkspaceToolsBenchmark [iterations] [command]}; samples alternate between the contenders, in a
 * rotating order, so drift hits all of them alike. {@code -Dcodeexec.bench.noChangedFiles=true} measures the tools
 * with changed-file reporting off. Target: median ratio tool / runner at most 1.10.
 */
public final class WorkspaceToolsBenchmark {

    private WorkspaceToolsBenchmark() {
    }

    public static void main(String[] args) {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        String command = args.length > 1 ? args[1] : "echo hello";
        try (LocalEngine engine = LocalEngine.create();
             CodeExecution codeExec = CodeExecution.builder().engine(engine)
                     .reportChangedFiles(!Boolean.getBoolean("codeexec.bench.noChangedFiles")).build()) {
            Workspace ws = engine.manager().createWorkspace("bench-raw", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.shell(command).cleanEnv(true)
                    .timeout(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS)).build();
            WorkspaceTools tools = codeExec.tools();
            AiServiceTool provided = codeExec.toolProvider().provideTools(null).aiServiceTools().stream()
                    .filter(t -> t.name().equals("workspace_exec")).findFirst().orElseThrow();
            InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                    .chatMemoryId("bench-tool").timestampNow().build();
            ToolExecutionRequest request = ToolExecutionRequest.builder().id("call_1").name("workspace_exec")
                    .arguments("{\"command\":\"" + command.replace("\"", "\\\"") + "\"}").build();

            for (int i = 0; i < 50; i++) {
                check(engine.runner().runProgram(ws, spec));
                check(tools.workspaceExec(command, null, null, null, null, null, ctx));
                check(provided.toolExecutor().executeWithContext(request, ctx));
            }
            long[] raw = new long[iterations];
            long[] viaMethod = new long[iterations];
            long[] viaProvider = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                // Rotate the order so that no contender always runs right after another's process exits.
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
                            String text = tools.workspaceExec(command, null, null, null, null, null, ctx);
                            viaMethod[i] = System.nanoTime() - t0;
                            check(text);
                        }
                        default -> {
                            long t0 = System.nanoTime();
                            ToolExecutionResult p = provided.toolExecutor().executeWithContext(request, ctx);
                            viaProvider[i] = System.nanoTime() - t0;
                            check(p);
                        }
                    }
                }
            }
            Stats sr = new Stats(raw);
            Stats sm = new Stats(viaMethod);
            Stats sp = new Stats(viaProvider);
            System.out.println("command: bash -c '" + command + "', clean environment, " + iterations + " runs");
            System.out.println("engine runner (baseline)      " + sr);
            System.out.println("workspace_exec @Tool method    " + sm);
            System.out.println("workspace_exec tool provider   " + sp);
            System.out.println(String.format(Locale.ROOT, "ratio @Tool method / runner:   %.3f (target <= 1.10)",
                    sm.median() / sr.median()));
            System.out.println(String.format(Locale.ROOT, "ratio tool provider / runner:  %.3f (target <= 1.10)",
                    sp.median() / sr.median()));
        }
    }

    private static void check(RunResult r) {
        if (r.exitCode() != 0) {
            throw new IllegalStateException("baseline run failed: " + r);
        }
    }

    private static void check(String toolText) {
        if (!toolText.startsWith("exit_code: 0 ")) {
            throw new IllegalStateException("tool run failed: " + toolText);
        }
    }

    private static void check(ToolExecutionResult r) {
        if (r.isError() || !r.resultText().startsWith("exit_code: 0 ")) {
            throw new IllegalStateException("tool run failed: " + r.resultText());
        }
    }
}
