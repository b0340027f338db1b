package dev.codeexec.benchmarks.tools;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.SandboxEngine;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The tool layer's cost: {@code workspace_exec} through the {@code @Tool} method and through the tool provider's
 * executor (JSON arguments), against the engine's runner running the same command line the same way
 * ({@code bash -c}, clean environment, same timeout) in a workspace of the same engine, in the same run, with the
 * conversation's {@code work/} holding 0, 10,000 and 100,000 files (100 per folder).
 *
 * <p>What the tool adds on top of the run: argument validation, the conversation's workspace lookup and lock, the
 * look of the workspace's change tracker (to report changed files) and formatting the result text. The runner's
 * workspace stays empty: a run itself does not depend on how many files the workspace holds.
 *
 * <p>Usage: {@code WorkspaceToolsBenchmark [iterations] [command] [engine] [file counts]}, defaults {@code 400},
 * {@code true}, {@code local} (or {@code sandbox}), {@code 0,10000,100000}; cases with more files take fewer
 * iterations (a quarter of them at 10,000 and above, at least 100). Samples alternate between the contenders, in a
 * rotating order, so drift hits all of them alike. {@code -Dcodeexec.bench.noChangedFiles=true} measures the tools
 * with changed-file reporting off; {@code -Dcodeexec.changeFeed=false} without the kernel's change notices.
 * Target: median ratio tool / runner at most 1.10 on an empty workspace, 1.2 at 100,000 files.
 *
 * <p>{@code WorkspaceToolsBenchmark conversations [count] [files] [engine]} (defaults 1000, 500, local) instead
 * measures what conversations leave on the heap: each one writes {@code files} files, runs {@code workspace_exec}
 * twice and is closed; the used heap after GC is printed before and after.
 */
public final class WorkspaceToolsBenchmark {

    private WorkspaceToolsBenchmark() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("conversations")) {
            conversations(args.length > 1 ? Integer.parseInt(args[1]) : 1000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 500, args.length > 3 ? args[3] : "local");
            return;
        }
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        String command = args.length > 1 ? args[1] : "true";
        String engineName = args.length > 2 ? args[2] : "local";
        List<Integer> counts = new ArrayList<>();
        for (String c : (args.length > 3 ? args[3] : "0,10000,100000").split(",")) {
            counts.add(Integer.parseInt(c.strip()));
        }
        try (Engine engine = engine(engineName);
             CodeExecution codeExec = CodeExecution.builder().engine(engine)
                     .reportChangedFiles(!Boolean.getBoolean("codeexec.bench.noChangedFiles")).build()) {
            Workspace ws = engine.manager().createWorkspace("bench-raw", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.shell(command).cleanEnv(true)
                    .timeout(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS)).build();
            System.out.println("engine: " + engineName + ", command: bash -c '" + command + "', clean environment");
            for (int files : counts) {
                int n = files >= 10_000 ? Math.max(100, iterations / 4) : iterations;
                measure(engine, codeExec, ws, spec, command, files, n);
            }
        }
    }

    private static Engine engine(String name) {
        return switch (name) {
            case "local" -> LocalEngine.create();
            case "sandbox" -> SandboxEngine.create();
            default -> throw new IllegalArgumentException("engine must be local or sandbox, got " + name);
        };
    }

    private static void measure(Engine engine, CodeExecution codeExec, Workspace ws, RunProgramSpec spec,
                                String command, int files, int iterations) {
        String conversation = "bench-tool-" + files;
        long t = System.nanoTime();
        fill(codeExec.workspace(conversation), files);
        long filled = System.nanoTime() - t;
        WorkspaceTools tools = codeExec.tools();
        AiServiceTool provided = codeExec.toolProvider().provideTools(null).aiServiceTools().stream()
                .filter(x -> x.name().equals("workspace_exec")).findFirst().orElseThrow();
        InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                .chatMemoryId(conversation).timestampNow().build();
        ToolExecutionRequest request = ToolExecutionRequest.builder().id("call_1").name("workspace_exec")
                .arguments("{\"command\":\"" + command.replace("\"", "\\\"") + "\"}").build();

        t = System.nanoTime();
        check(tools.workspaceExec(command, null, null, null, null, null, ctx));
        long first = System.nanoTime() - t;
        for (int i = 0; i < Math.min(50, iterations); i++) {
            check(engine.runner().runProgram(ws, spec));
            check(tools.workspaceExec(command, null, null, null, null, null, ctx));
            check(provided.toolExecutor().executeWithContext(request, ctx));
        }
        long[] raw = new long[iterations];
        long[] viaMethod = new long[iterations];
        long[] viaProvider = new long[iterations];
        String lastText = "";
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
                        lastText = text;
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
        System.out.println();
        System.out.printf(Locale.ROOT, "== %,d files in work/ (%d runs; written in %.1f s; first call, which starts "
                + "the change tracker, %.1f ms)%n", files, iterations, filled / 1e9, first / 1e6);
        System.out.println("engine runner (baseline)      " + sr);
        System.out.println("workspace_exec @Tool method    " + sm);
        System.out.println("workspace_exec tool provider   " + sp);
        System.out.println(String.format(Locale.ROOT, "ratio @Tool method / runner:   %.3f", sm.median() / sr.median()));
        System.out.println(String.format(Locale.ROOT, "ratio tool provider / runner:  %.3f", sp.median() / sr.median()));
        System.out.println(String.format(Locale.ROOT, "ratio p90 @Tool method / runner: %.3f; load average %s",
                sm.percentile(90) / sr.percentile(90), ConcurrencyBenchmark.loadAverage()));
        int report = lastText.indexOf("--- files changed ---");
        if (report >= 0) {
            System.out.println("files changed section: " + lastText.substring(report).replace("\n", " | "));
        }
    }

    /** Writes {@code files} small files under {@code work/tree/}, 100 per folder, through the engine. */
    private static void fill(WorkspaceIO io, int files) {
        byte[] content = "some content\n".getBytes(StandardCharsets.UTF_8);
        List<PutFile> batch = new ArrayList<>();
        for (int i = 0; i < files; i++) {
            batch.add(PutFile.of("work/tree/d" + (i / 100) + "/f" + i + ".txt", content));
            if (batch.size() == 1000 || i == files - 1) {
                io.putFiles(batch);
                batch.clear();
            }
        }
    }

    private static void conversations(int count, int files, String engineName) {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        try (Engine engine = engine(engineName);
             CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceTools tools = codeExec.tools();
            long before = 0;
            long t = System.nanoTime();
            for (int i = 0; i < count; i++) {
                String conversation = "conversation-" + i;
                fill(codeExec.workspace(conversation), files);
                InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                        .chatMemoryId(conversation).timestampNow().build();
                check(tools.workspaceExec("true", null, null, null, null, null, ctx));
                check(tools.workspaceExec("echo x > out/result.txt", null, null, null, null, null, ctx));
                codeExec.closeWorkspace(conversation);
                if (i == 9) {
                    before = usedAfterGc(memory); // classes loaded, caches warm
                }
            }
            long after = usedAfterGc(memory);
            System.out.printf(Locale.ROOT, "engine: %s, %d conversations of %d files each (%.1f s)%n", engineName,
                    count, files, (System.nanoTime() - t) / 1e9);
            System.out.printf(Locale.ROOT, "used heap after GC: %.1f MiB after 10 conversations, %.1f MiB after %d"
                    + " (%+.1f KiB per conversation)%n", before / 1048576.0, after / 1048576.0, count,
                    (after - before) / 1024.0 / (count - 10));
        }
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
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
