package dev.codeexec.benchmarks;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * LocalEngine against raw baselines measured in the same run.
 * <ol>
 *   <li>{@code runProgram("true")} against a raw {@link ProcessBuilder} start of {@code true} (read both streams,
 *       wait), against a raw {@code unshare --pid --fork ... true} start (the PID namespace is what makes the tree
 *       kill complete), and against a raw start of the engine's whole wrapper chain where the host has it
 *       ({@code setpriv --pdeathsig KILL -- sh -c 'exec "$@"' unshare ... true}: the parent-death signal, the shell
 *       that joins the run's control groups, the namespace), whose ratio is the engine's own overhead.</li>
 *   <li>A program printing 200 MB to stdout with the default 1 MiB cap: the peak growth of the used heap, sampled
 *       while it runs.</li>
 * </ol>
 * Usage: {@code LocalEngineBenchmark [iterations]}; samples alternate between the contenders so drift hits both.
 */
public final class LocalEngineBenchmark {

    private LocalEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        try (LocalEngine engine = LocalEngine.create()) {
            Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
            // Inherited environment, as the raw baselines: the same command in the same conditions.
            RunProgramSpec spec = RunProgramSpec.builder("/bin/true").build();
            Path dir = Path.of(ws.path());
            String[] raw = {"/bin/true"};
            String[] rawNs = {"/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--",
                "/bin/true"};
            String[] rawChain = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/bin/sh", "-c", "exec \"$@\"",
                "codeexec-run", "/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--", "/bin/true"};
            for (int i = 0; i < 50; i++) {
                engine.runner().runProgram(ws, spec);
                rawRun(raw, dir);
                rawRun(rawNs, dir);
                rawRun(rawChain, dir);
            }
            long[] eng = new long[iterations];
            long[] base = new long[iterations];
            long[] baseNs = new long[iterations];
            long[] baseChain = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                long t0 = System.nanoTime();
                RunResult r = engine.runner().runProgram(ws, spec);
                long t1 = System.nanoTime();
                rawRun(raw, dir);
                long t2 = System.nanoTime();
                rawRun(rawNs, dir);
                long t3 = System.nanoTime();
                rawRun(rawChain, dir);
                long t4 = System.nanoTime();
                if (r.exitCode() != 0) {
                    throw new IllegalStateException("engine run failed: " + r);
                }
                eng[i] = t1 - t0;
                base[i] = t2 - t1;
                baseNs[i] = t3 - t2;
                baseChain[i] = t4 - t3;
            }
            Stats e = new Stats(eng);
            Stats b = new Stats(base);
            Stats bn = new Stats(baseNs);
            Stats bc = new Stats(baseChain);
            System.out.println("LocalEngine.runProgram(true):      " + e);
            System.out.println("raw ProcessBuilder(true):          " + b);
            System.out.println("raw ProcessBuilder(unshare true):  " + bn);
            System.out.println("raw ProcessBuilder(setpriv sh unshare true): " + bc);
            System.out.printf("ratio engine / raw true:          %.2f%n", e.median() / b.median());
            System.out.printf("ratio engine / raw unshare true:  %.2f%n", e.median() / bn.median());
            System.out.printf("ratio engine / raw same wrappers: %.2f%n", e.median() / bc.median());

            heapUnderFloodedStdout(engine, ws);
        }
    }

    /** Starts a process, drains both streams, waits: what any careful caller of ProcessBuilder does. */
    private static void rawRun(String[] argv, Path dir) throws Exception {
        Process p = new ProcessBuilder(argv).directory(dir.toFile()).start();
        p.getOutputStream().close();
        Thread err = new Thread(() -> drain(p.getErrorStream()));
        err.start();
        drain(p.getInputStream());
        p.waitFor();
        err.join();
    }

    private static void drain(InputStream in) {
        try (in) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (java.io.IOException ignored) {
            // Closed: nothing more to read.
        }
    }

    private static void heapUnderFloodedStdout(LocalEngine engine, Workspace ws) throws Exception {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        System.gc();
        Thread.sleep(200);
        long before = mem.getHeapMemoryUsage().getUsed();
        AtomicLong peak = new AtomicLong(before);
        AtomicBoolean running = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> {
            while (running.get()) {
                peak.accumulateAndGet(mem.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        sampler.start();
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "head -c 200000000 /dev/zero | tr '\\0' x").timeout(Duration.ofMinutes(5)).build());
        running.set(false);
        sampler.join();
        long growth = peak.get() - before;
        int cap = 1 << 20;
        System.out.printf("200 MB stdout: kept %d chars, truncated=%s, took %d ms%n", r.stdout().length(),
                r.stdoutTruncated(), r.duration().toMillis());
        System.out.printf("peak heap growth: %.2f MiB = %.2f x the 1 MiB cap (target < 3x)%n",
                growth / 1048576.0, (double) growth / cap);
    }
}
