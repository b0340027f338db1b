package dev.codeexec.benchmarks.sandbox;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.sandbox.SandboxEngine;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A python {@code 1+1} block in the sandbox's kernel ({@code SandboxEngine.Builder.pythonKernel}) against the same
 * block as a fresh {@code python3 -c} program through the same sandbox engine, and against the Jupyter engine's cell
 * (a kernel on the host, no boundary), all in one run; blocks of samples alternate between the contenders so that
 * drift hits all of them.
 * <ol>
 *   <li>kernel cell: {@code executeCode(ws, "1+1")} on the engine with a kernel (the cell, its result, the look at
 *       an empty {@code out/}, which needs no pause of the kernel);</li>
 *   <li>kernel cell beside a file: the same in a workspace whose {@code out/} holds a small file, so the collection
 *       pauses and resumes the kernel and reads the file;</li>
 *   <li>fresh program: {@code runner().runProgram(python3 -c "print(1+1)")} in another workspace of the same engine
 *       (no kernel there);</li>
 *   <li>program beside a kernel: the same run in the kernel's workspace (the kernel is paused for it);</li>
 *   <li>Jupyter cell: {@code JupyterEngine.executeCode(ws, "1+1")} with {@code /usr/bin/python3}.</li>
 * </ol>
 * Also the kernel's start (a new workspace's first cell) against the Jupyter engine's. Usage:
 * {@code sandbox.SandboxKernelBenchmark [samples] [starts]} (defaults 300 and 5). Needs bubblewrap, root or user
 * namespaces, control groups, and {@code /usr/bin/python3} with ipykernel.
 */
public final class SandboxKernelBenchmark {

    private static final int BLOCK = 25;
    private static final int WARMUP = 100;

    private SandboxKernelBenchmark() {
    }

    public static void main(String[] args) {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int starts = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        try (SandboxEngine sandbox = SandboxEngine.builder().pythonKernel(KernelOptions.defaults()).build();
             JupyterEngine jupyter = JupyterEngine.builder().python("/usr/bin/python3").build()) {
            Workspace kws = sandbox.manager().createWorkspace("kernel", WorkspacePolicy.DEFAULT);
            Workspace fws = sandbox.manager().createWorkspace("kernel-with-file", WorkspacePolicy.DEFAULT);
            sandbox.fs().putFiles(fws, List.of(PutFile.of("out/kept.txt", "kept")));
            Workspace pws = sandbox.manager().createWorkspace("programs", WorkspacePolicy.DEFAULT);
            Workspace jws = jupyter.manager().createWorkspace("jupyter", WorkspacePolicy.DEFAULT);
            RunProgramSpec fresh = RunProgramSpec.builder("python3").args("-c", "print(1+1)").cwd("work").build();

            LongSupplier kernelCell = () -> timed(() -> check(sandbox.executeCode(kws, oneAndOne())));
            LongSupplier kernelCellFile = () -> timed(() -> check(sandbox.executeCode(fws, oneAndOne()), 1));
            LongSupplier freshProgram = () -> timed(() -> check(sandbox.runner().runProgram(pws, fresh)));
            LongSupplier programBeside = () -> timed(() -> check(sandbox.runner().runProgram(kws, fresh)));
            LongSupplier jupyterCell = () -> timed(() -> check(jupyter.executeCode(jws, oneAndOne())));
            LongSupplier[] contenders = {kernelCell, freshProgram, programBeside, jupyterCell, kernelCellFile};

            long t0 = System.nanoTime();
            check(sandbox.executeCode(kws, oneAndOne()));
            long firstKernel = System.nanoTime() - t0;
            for (int i = 0; i < WARMUP; i++) {
                for (LongSupplier c : contenders) {
                    c.getAsLong();
                }
            }
            long[][] t = new long[contenders.length][samples];
            for (int done = 0; done < samples; done += BLOCK) {
                int n = Math.min(BLOCK, samples - done);
                for (int c = 0; c < contenders.length; c++) {
                    for (int i = 0; i < n; i++) {
                        t[c][done + i] = contenders[c].getAsLong();
                    }
                }
            }
            Stats kernel = new Stats(t[0]);
            Stats program = new Stats(t[1]);
            Stats beside = new Stats(t[2]);
            Stats jup = new Stats(t[3]);
            Stats withFile = new Stats(t[4]);
            System.out.println("sandbox kernel cell 1+1 (executeCode):       " + kernel);
            System.out.println("sandbox fresh python3 -c (runProgram):       " + program);
            System.out.println("sandbox python3 -c beside a live kernel:     " + beside);
            System.out.println("JupyterEngine cell 1+1 (executeCode):        " + jup);
            System.out.println("sandbox kernel cell 1+1, a file in out/:     " + withFile);
            System.out.printf("p50 / p90, ms: kernel %.2f / %.2f, fresh %.2f / %.2f, beside %.2f / %.2f, jupyter %.2f /"
                            + " %.2f%n", kernel.median() / 1000, kernel.percentile(90) / 1000,
                    program.median() / 1000, program.percentile(90) / 1000, beside.median() / 1000,
                    beside.percentile(90) / 1000, jup.median() / 1000, jup.percentile(90) / 1000);
            System.out.printf("ratio kernel cell / Jupyter cell (p50):      %.3f (goal <= 1.2)%n",
                    kernel.median() / jup.median());
            System.out.printf("ratio kernel cell / Jupyter cell (p90):      %.3f%n",
                    kernel.percentile(90) / jup.percentile(90));
            System.out.printf("ratio kernel cell with a file in out/ / Jupyter cell (p50): %.3f (p50 %.2f ms: the "
                    + "collection pauses the kernel)%n", withFile.median() / jup.median(), withFile.median() / 1000);
            System.out.printf("ratio fresh program / kernel cell (p50):     %.1f%n", program.median() / kernel.median());
            System.out.printf("pause + resume of the kernel per run (p50):  %.2f ms%n",
                    (beside.median() - program.median()) / 1000);
            System.out.printf("load average during the run:                 %.2f (on %d CPUs)%n",
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors());

            long[] sStart = new long[starts];
            long[] jStart = new long[starts];
            for (int i = 0; i < starts; i++) {
                Workspace s = sandbox.manager().createWorkspace("start", WorkspacePolicy.DEFAULT);
                sStart[i] = timed(() -> check(sandbox.executeCode(s, oneAndOne())));
                sandbox.manager().cleanup(s);
                Workspace j = jupyter.manager().createWorkspace("start", WorkspacePolicy.DEFAULT);
                jStart[i] = timed(() -> check(jupyter.executeCode(j, oneAndOne())));
                jupyter.manager().cleanup(j);
            }
            Stats ss = new Stats(sStart);
            Stats js = new Stats(jStart);
            System.out.printf("kernel start + first 1+1, sandbox: median %.0f ms, p90 %.0f ms (n=%d)%n",
                    ss.median() / 1000, ss.percentile(90) / 1000, starts);
            System.out.printf("kernel start + first 1+1, Jupyter: median %.0f ms, p90 %.0f ms (n=%d)%n",
                    js.median() / 1000, js.percentile(90) / 1000, starts);
            System.out.printf("first sandbox kernel of the engine: %d ms%n", firstKernel / 1_000_000);
        }
    }

    private static CodeExecutionInput oneAndOne() {
        return CodeExecutionInput.of(CodeBlock.of("python", "1+1"));
    }

    private static long timed(Runnable r) {
        long s = System.nanoTime();
        r.run();
        return System.nanoTime() - s;
    }

    private static void check(CodeExecutionResult r) {
        check(r, 0);
    }

    private static void check(CodeExecutionResult r, int files) {
        if (r.exitCode() != 0 || !r.output().equals("2\n") || r.outputFiles().size() != files) {
            throw new IllegalStateException("cell failed: " + r);
        }
    }

    private static void check(RunResult r) {
        if (r.exitCode() != 0 || !r.stdout().equals("2\n")) {
            throw new IllegalStateException("run failed: " + r);
        }
    }
}
