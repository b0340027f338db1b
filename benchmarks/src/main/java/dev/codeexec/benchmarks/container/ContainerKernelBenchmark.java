package dev.codeexec.benchmarks.container;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.lang.management.ManagementFactory;

/**
 * The container's Python kernel ({@code ContainerEngine.Builder.pythonKernel}) against a fresh Python per block in
 * the same container, measured in the same run.
 * <ol>
 *   <li>{@code 1+1} as a cell of the workspace's kernel ({@code executeCode}: the cell over the exec's stdin and
 *       stdout, its reply, the result, the empty {@code out/} seen through the kernel's relay, no archive request) against {@code python3 -c "print(1+1)"} run in the same
 *       workspace container ({@code runProgram}: one exec with the run's wrapper), and against the same block through
 *       {@code executeCode} on an engine without a kernel (the block written to {@code runs/}, then run). Blocks of
 *       samples alternate between the contenders so drift hits all of them.</li>
 *   <li>Kernel start: a new workspace's first cell (the exec, the relay, ipykernel's start, the handshake,
 *       {@code 1+1}).</li>
 * </ol>
 * Usage: {@code container.ContainerKernelBenchmark [image [cells [starts]]]} (defaults
 * {@code codeexec-python-kernel:bookworm}, 200, 5); the warm-up is 50 blocks of each contender, or as many as the
 * cells. Needs the Docker engine and an image with ipykernel
 * ({@code ./scripts/provision docker} builds it).
 */
public final class ContainerKernelBenchmark {

    private static final int BLOCK = 25;
    private static final int WARMUP = 50;

    private ContainerKernelBenchmark() {
    }

    public static void main(String[] args) {
        String image = args.length > 0 ? args[0] : "codeexec-python-kernel:bookworm";
        int cells = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int starts = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        // Both without a disk quota (Docker's volumes), so that neither engine's volume set-up touches the other's.
        try (ContainerEngine kernel = ContainerEngine.builder().image(image).diskQuota(0)
                .pythonKernel(KernelOptions.defaults()).build();
             ContainerEngine fresh = ContainerEngine.builder().image(image).diskQuota(0).build()) {
            Workspace ws = kernel.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
            Workspace plain = fresh.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
            RunProgramSpec python = RunProgramSpec.builder("python3").args("-c", "print(1+1)").build();
            for (int i = 0; i < Math.min(WARMUP, cells); i++) {
                check(block(kernel, ws, "1+1"));
                check(kernel.runner().runProgram(ws, python));
                check(block(fresh, plain, "print(1+1)"));
            }
            long[] cell = new long[cells];
            long[] run = new long[cells];
            long[] script = new long[cells];
            for (int done = 0; done < cells; done += BLOCK) {
                int n = Math.min(BLOCK, cells - done);
                for (int i = 0; i < n; i++) {
                    long s = System.nanoTime();
                    CodeExecutionResult r = block(kernel, ws, "1+1");
                    cell[done + i] = System.nanoTime() - s;
                    check(r);
                }
                for (int i = 0; i < n; i++) {
                    long s = System.nanoTime();
                    RunResult r = kernel.runner().runProgram(ws, python);
                    run[done + i] = System.nanoTime() - s;
                    check(r);
                }
                for (int i = 0; i < n; i++) {
                    long s = System.nanoTime();
                    CodeExecutionResult r = block(fresh, plain, "print(1+1)");
                    script[done + i] = System.nanoTime() - s;
                    check(r);
                }
            }
            Stats c = new Stats(cell);
            Stats r = new Stats(run);
            Stats b = new Stats(script);
            System.out.println("kernel cell executeCode(1+1):                 " + c);
            System.out.println("fresh runProgram(python3 -c print(1+1)):      " + r);
            System.out.println("fresh block executeCode(print(1+1)), no kernel: " + b);
            System.out.printf("ratio kernel cell / fresh python3 -c (median): %.3f%n", c.median() / r.median());
            System.out.printf("ratio kernel cell / fresh python3 -c (p90):    %.3f%n",
                    c.percentile(90) / r.percentile(90));
            System.out.printf("ratio kernel cell / fresh block (median):      %.3f%n", c.median() / b.median());
            System.out.printf("load average during the run:                   %.2f (on %d CPUs)%n",
                    ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors());

            long[] start = new long[starts];
            for (int i = 0; i < starts; i++) {
                Workspace w = kernel.manager().createWorkspace("start", WorkspacePolicy.DEFAULT);
                long s = System.nanoTime();
                check(block(kernel, w, "1+1"));
                start[i] = System.nanoTime() - s;
                kernel.manager().cleanup(w);
            }
            Stats st = new Stats(start);
            System.out.printf("kernel start + first 1+1 (new workspace):      median %.0f ms, p10 %.0f ms, p90 %.0f ms "
                    + "(n=%d)%n", st.median() / 1000, st.percentile(10) / 1000, st.percentile(90) / 1000, starts);
        }
    }

    private static CodeExecutionResult block(ContainerEngine engine, Workspace ws, String code) {
        return engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", code)));
    }

    private static void check(CodeExecutionResult r) {
        if (r.exitCode() != 0 || !r.output().equals("2\n")) {
            throw new IllegalStateException("block failed: " + r);
        }
    }

    private static void check(RunResult r) {
        if (r.exitCode() != 0 || !r.stdout().equals("2\n")) {
            throw new IllegalStateException("run failed: " + r);
        }
    }
}
