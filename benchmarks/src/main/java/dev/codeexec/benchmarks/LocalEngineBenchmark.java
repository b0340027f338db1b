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
 *       kill complete), and against raw starts of the engine's wrapper chains where the host has them: the one it
 *       launches where its launcher thread forks the run in its control groups itself (cgroup v1:
 *       {@code setpriv --pdeathsig KILL -- unshare ... true}, the parent-death signal and the namespace), and the
 *       one with the launching shell that joins the groups where that cannot be done (cgroup v2, small process
 *       limits: {@code setpriv ... sh -c 'exec "$@"' unshare ... true}). The ratio to the chain the engine uses
 *       here is its own overhead. Each line gives p50 and p90; the load average is printed before and after.</li>
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
            String[] rawShell = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/bin/sh", "-c", "exec \"$@\"",
                "codeexec-run", "/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--", "/bin/true"};
            String[] rawChain = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--pid",
                "--fork", "--kill-child", "--", "/bin/true"};
            // The engine's own command line: without the shell where it forks runs in their groups itself.
            boolean shellJoin = !ownGroupsOnV1();
            System.out.println("load before: " + loadAverage());
            System.out.println("engine joins control groups through: "
                    + (shellJoin ? "a launching shell" : "its launcher thread (no shell)"));
            for (int i = 0; i < 50; i++) {
                engine.runner().runProgram(ws, spec);
                rawRun(raw, dir);
                rawRun(rawNs, dir);
                rawRun(rawChain, dir);
                rawRun(rawShell, dir);
            }
            long[] eng = new long[iterations];
            long[] base = new long[iterations];
            long[] baseNs = new long[iterations];
            long[] baseChain = new long[iterations];
            long[] baseShell = new long[iterations];
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
                rawRun(rawShell, dir);
                long t5 = System.nanoTime();
                if (r.exitCode() != 0) {
                    throw new IllegalStateException("engine run failed: " + r);
                }
                eng[i] = t1 - t0;
                base[i] = t2 - t1;
                baseNs[i] = t3 - t2;
                baseChain[i] = t4 - t3;
                baseShell[i] = t5 - t4;
            }
            Stats e = new Stats(eng);
            Stats b = new Stats(base);
            Stats bn = new Stats(baseNs);
            Stats bc = new Stats(baseChain);
            Stats bs = new Stats(baseShell);
            Stats same = shellJoin ? bs : bc;
            System.out.println("LocalEngine.runProgram(true):      " + e);
            System.out.println("raw ProcessBuilder(true):          " + b);
            System.out.println("raw ProcessBuilder(unshare true):  " + bn);
            System.out.println("raw ProcessBuilder(setpriv unshare true):    " + bc);
            System.out.println("raw ProcessBuilder(setpriv sh unshare true): " + bs);
            System.out.printf("ratio engine / raw true:          p50 %.2f, p90 %.2f%n", e.median() / b.median(),
                    e.percentile(90) / b.percentile(90));
            System.out.printf("ratio engine / raw unshare true:  p50 %.2f, p90 %.2f%n", e.median() / bn.median(),
                    e.percentile(90) / bn.percentile(90));
            System.out.printf("ratio engine / raw setpriv sh unshare (the shell-join chain): p50 %.2f, p90 %.2f%n",
                    e.median() / bs.median(), e.percentile(90) / bs.percentile(90));
            System.out.printf("ratio engine / raw same wrappers: p50 %.2f, p90 %.2f%n", e.median() / same.median(),
                    e.percentile(90) / same.percentile(90));
            System.out.println("load after: " + loadAverage());

            heapUnderFloodedStdout(engine, ws);
        }
    }

    /** True when the JVM's pids controller is in a cgroup v1 hierarchy, where the engine forks runs in their groups. */
    private static boolean ownGroupsOnV1() {
        try {
            return java.nio.file.Files.readAllLines(Path.of("/proc/self/cgroup")).stream()
                    .anyMatch(l -> l.matches("\\d+:pids:.*")) && java.nio.file.Files.exists(Path.of(
                    "/sys/fs/cgroup/pids/tasks"));
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).strip();
        } catch (java.io.IOException e) {
            return "unknown";
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
