package dev.codeexec.benchmarks.interpreter;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.SandboxEngine;
import dev.langchain4j.invocation.InvocationContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * A python snippet ({@code print(1)}) through {@code executeCode} with the warm path on and off, against a raw
 * {@code python3 -c 'print(1)'} and the Jupyter engine's kernel, in the same run.
 *
 * <p>Every sample is taken after a pause of {@link #GAP_MILLIS} ms, the least an LLM round trip gives between two tool
 * calls, so that a warm engine's spare is ready (its interpreter started during the pause, as it would between two
 * calls of a conversation). The contenders alternate, their order rotated each round, so drift hits all alike.
 * Contenders:
 * <ul>
 *   <li>raw: {@code /usr/bin/python3 -c 'print(1)'} (the interpreter the engines find on their clean {@code PATH})
 *       started with {@link ProcessBuilder} in an environment of only {@code PATH}, its output read to the end;</li>
 *   <li>local warm / fresh: {@link LocalEngine#executeCode} with {@code warmPython(true)} / without;</li>
 *   <li>local warm through the {@code execute_code} tool ({@link WorkspaceTools#executeCode});</li>
 *   <li>sandbox: {@link SandboxEngine#executeCode} built with {@code warmPython(true)}; its count of warm blocks is
 *       printed (the sandbox keeps python blocks fresh until it can tell a spare's boundary is current);</li>
 *   <li>jupyter: the kernel's cell ({@code /usr/bin/python3} with ipykernel), state shared between cells.</li>
 * </ul>
 * Usage: {@code interpreter.WarmPythonBenchmark [rounds] [gap ms]} (defaults 100 and 75).
 */
public final class WarmPythonBenchmark {

    /** {@value} ms between two samples. */
    static final int GAP_MILLIS = 75;
    private static final String CODE = "print(1)";
    /** The interpreter the engines find on a clean {@code PATH} (and the Jupyter kernel's). */
    private static final String PYTHON = "/usr/bin/python3";

    private WarmPythonBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int gap = args.length > 1 ? Integer.parseInt(args[1]) : GAP_MILLIS;
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();
        try (LocalEngine warm = LocalEngine.builder().warmPython(true).build();
             LocalEngine fresh = LocalEngine.builder().build();
             LocalEngine toolEngine = LocalEngine.builder().warmPython(true).build();
             SandboxEngine sandbox = SandboxEngine.builder().warmPython(true).build();
             JupyterEngine jupyter = JupyterEngine.builder().python(PYTHON).build();
             CodeExecution codeExec = CodeExecution.builder().engine(toolEngine).build()) {
            WorkspaceTools tools = codeExec.tools();
            InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                    .chatMemoryId("bench-warm").timestampNow().build();
            Map<String, Callable<Object>> contenders = new LinkedHashMap<>();
            contenders.put("raw python3 -c 'print(1)'", WarmPythonBenchmark::raw);
            contenders.put("local executeCode, warm", block(warm));
            contenders.put("local executeCode, fresh", block(fresh));
            contenders.put("local execute_code tool, warm", () -> tool(tools, ctx));
            contenders.put("sandbox executeCode, warmPython(true)", block(sandbox));
            contenders.put("jupyter kernel cell", block(jupyter));

            List<Callable<Object>> calls = new ArrayList<>(contenders.values());
            for (int i = 0; i < 10; i++) { // warm-up: the JIT, the kernel, the first spares
                for (Callable<Object> c : calls) {
                    c.call();
                }
            }
            long[][] samples = new long[calls.size()][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < calls.size(); k++) {
                    int c = (r + k) % calls.size();
                    Thread.sleep(gap);
                    long t0 = System.nanoTime();
                    calls.get(c).call();
                    samples[c][r] = System.nanoTime() - t0;
                }
            }
            String loadAfter = Files.readString(Path.of("/proc/loadavg")).trim();
            List<String> names = new ArrayList<>(contenders.keySet());
            double rawMedian = new Stats(samples[0]).median();
            double rawP90 = new Stats(samples[0]).percentile(90);
            System.out.printf("%d rounds, %d ms between samples, contenders alternating%n", rounds, gap);
            for (int c = 0; c < names.size(); c++) {
                Stats s = new Stats(samples[c]);
                System.out.printf("%-40s median %6.2f ms, p90 %6.2f ms  (%.2fx / %.2fx raw)%n", names.get(c),
                        s.median() / 1000, s.percentile(90) / 1000, s.median() / rawMedian,
                        s.percentile(90) / rawP90);
            }
            System.out.printf("warm blocks: local %d, tool engine %d, sandbox %d%n", warm.warmPythonBlocks(),
                    toolEngine.warmPythonBlocks(), sandbox.warmPythonBlocks());
            System.out.println("load before: " + loadBefore + "; after: " + loadAfter + " (on "
                    + Runtime.getRuntime().availableProcessors() + " CPUs)");
        }
    }

    private static Callable<Object> block(Engine engine) {
        Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
        CodeExecutionInput input = new CodeExecutionInput(List.of(CodeBlock.of("python", CODE)), null,
                Duration.ofSeconds(30));
        return () -> check(engine.executeCode(ws, input));
    }

    private static Object check(CodeExecutionResult r) {
        if (r.exitCode() != 0 || !r.output().strip().equals("1")) {
            throw new IllegalStateException("unexpected result: " + r);
        }
        return r;
    }

    private static Object tool(WorkspaceTools tools, InvocationContext ctx) {
        String text = tools.executeCode("python", CODE, null, ctx);
        if (!text.contains("1")) {
            throw new IllegalStateException("unexpected tool result: " + text);
        }
        return text;
    }

    private static Object raw() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(PYTHON, "-c", CODE).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/bin:/bin");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0 || !out.strip().equals("1")) {
            throw new IllegalStateException("unexpected raw result: " + out);
        }
        return out;
    }
}
