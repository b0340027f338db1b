package dev.codeexec.benchmarks.sandbox;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.sandbox.AdditionalPermissions;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.spi.ProgramLaunch;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * SandboxEngine against a raw start of the same sandbox, measured in the same run.
 * <ol>
 *   <li>{@code runProgram("true")} in the default sandbox (workspace-write, restricted network, seccomp) against a
 *       plain {@link ProcessBuilder} start of exactly the command line the engine launches (the launching shell and
 *       bubblewrap with the same arguments, from {@link SandboxEngine#plannedLaunch}), draining both streams: the
 *       ratio is the engine's own overhead (layout planning, checks, output handling, threads). Samples alternate.</li>
 *   <li>32 concurrent runs in 32 workspaces, repeated: every run must succeed; the throughput is reported, next to
 *       the same concurrency of raw starts.</li>
 * </ol>
 * Usage: {@code sandbox.SandboxEngineBenchmark [iterations] [rounds]} (defaults 300 and 10). Needs bubblewrap.
 */
public final class SandboxEngineBenchmark {

    private static final int CONCURRENCY = 32;

    private SandboxEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        try (SandboxEngine engine = SandboxEngine.create()) {
            Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.builder("/bin/true").build();
            ProgramLaunch raw = engine.plannedLaunch(ws, spec, AdditionalPermissions.NONE);
            for (int i = 0; i < 50; i++) {
                check(engine.runner().runProgram(ws, spec));
                rawRun(raw);
            }
            long[] eng = new long[iterations];
            long[] base = new long[iterations];
            long[] plan = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                long t0 = System.nanoTime();
                check(engine.runner().runProgram(ws, spec));
                long t1 = System.nanoTime();
                rawRun(raw);
                long t2 = System.nanoTime();
                engine.plannedLaunch(ws, spec, AdditionalPermissions.NONE);
                long t3 = System.nanoTime();
                eng[i] = t1 - t0;
                base[i] = t2 - t1;
                plan[i] = t3 - t2;
            }
            Stats e = new Stats(eng);
            Stats b = new Stats(base);
            System.out.println("SandboxEngine.runProgram(true):        " + e);
            System.out.println("raw ProcessBuilder, same command line: " + b);
            System.out.println("of which layout planning + checks:     " + new Stats(plan));
            System.out.printf("ratio engine / raw (median):           %.3f (target <= 1.15)%n", e.median() / b.median());
            System.out.printf("absolute per-run cost:                 %.2f ms (engine), %.2f ms (raw), +%.2f ms%n",
                    e.median() / 1000, b.median() / 1000, (e.median() - b.median()) / 1000);

            concurrent(engine, rounds);
        }
        workspaceCreation(Math.max(20, iterations / 10));
        perRunCosts(Math.max(40, iterations / 5));
    }

    /**
     * What a run costs more in a workspace with a disk quota (on a volume) than in a plain directory, and under a
     * kernel-enforced command allow list than without: the same command in each, alternating in one run.
     */
    private static void perRunCosts(int n) {
        RunProgramSpec spec = RunProgramSpec.builder("ls").build();
        try (SandboxEngine quota = SandboxEngine.create();
             SandboxEngine plain = SandboxEngine.builder().diskQuota(0).build()) {
            if (quota.describe().diskQuota()) {
                compare("run in a workspace with a quota", quota, "run in a plain directory", plain, spec, n);
            }
        }
        SandboxEngine guarded;
        try {
            guarded = SandboxEngine.builder().enforceAllowList(CommandPolicy.allowing("ls")).build();
        } catch (RuntimeException e) {
            System.out.println("allow list in the kernel: not available here (" + e.getMessage() + "); not measured");
            return;
        }
        try (guarded; SandboxEngine open = SandboxEngine.create()) {
            compare("run under the kernel allow list", guarded, "run without it", open, spec, n);
        }
    }

    private static void compare(String aName, SandboxEngine a, String bName, SandboxEngine b, RunProgramSpec spec,
                                int n) {
        Workspace wa = a.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
        Workspace wb = b.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
        alternate(n, aName, () -> check(a.runner().runProgram(wa, spec)),
                bName, () -> check(b.runner().runProgram(wb, spec)));
    }

    /**
     * Creating and removing a workspace with its disk quota (a volume of its own) against a plain directory (no
     * quota), alternating in one run. Prints nothing where the host cannot enforce a quota.
     */
    private static void workspaceCreation(int n) {
        try (SandboxEngine quota = SandboxEngine.create();
             SandboxEngine plain = SandboxEngine.builder().diskQuota(0).build()) {
            if (!quota.describe().diskQuota()) {
                System.out.println("workspace creation: no disk quota on this host; not measured");
                return;
            }
            alternate(n, "create + clean up a workspace, quota",
                    () -> quota.manager().cleanup(quota.manager().createWorkspace("q", WorkspacePolicy.DEFAULT)),
                    "create + clean up a workspace, plain",
                    () -> plain.manager().cleanup(plain.manager().createWorkspace("p", WorkspacePolicy.DEFAULT)));
        }
    }

    /** Times {@code a} and {@code b} alternately, {@code n} times each after 5 warm-ups; prints both and the ratio. */
    private static void alternate(int n, String aName, Runnable a, String bName, Runnable b) {
        long[] ta = new long[n];
        long[] tb = new long[n];
        for (int i = 0; i < n + 5; i++) {
            long t0 = System.nanoTime();
            a.run();
            long t1 = System.nanoTime();
            b.run();
            long t2 = System.nanoTime();
            if (i >= 5) {
                ta[i - 5] = t1 - t0;
                tb[i - 5] = t2 - t1;
            }
        }
        Stats sa = new Stats(ta);
        Stats sb = new Stats(tb);
        System.out.printf("%-38s %s%n", aName + ":", sa);
        System.out.printf("%-38s %s%n", bName + ":", sb);
        System.out.printf("%-38s %.2f (+%.1f ms)%n", "ratio (median):", sa.median() / sb.median(),
                (sa.median() - sb.median()) / 1000);
    }

    private static void concurrent(SandboxEngine engine, int rounds) throws Exception {
        List<Workspace> spaces = new ArrayList<>();
        List<ProgramLaunch> raws = new ArrayList<>();
        RunProgramSpec spec = RunProgramSpec.builder("/bin/true").build();
        for (int i = 0; i < CONCURRENCY; i++) {
            Workspace w = engine.manager().createWorkspace("c" + i, WorkspacePolicy.DEFAULT);
            spaces.add(w);
            raws.add(engine.plannedLaunch(w, spec, AdditionalPermissions.NONE));
        }
        ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
        try {
            // Warm-up round of each.
            runRound(pool, spaces, engine, spec);
            rawRound(pool, raws);
            int ok = 0;
            int total = 0;
            long engineNanos = 0;
            long rawNanos = 0;
            for (int r = 0; r < rounds; r++) {
                long t0 = System.nanoTime();
                ok += runRound(pool, spaces, engine, spec);
                long t1 = System.nanoTime();
                rawRound(pool, raws);
                long t2 = System.nanoTime();
                total += CONCURRENCY;
                engineNanos += t1 - t0;
                rawNanos += t2 - t1;
            }
            System.out.printf("%d concurrent runs in %d workspaces x %d rounds: %d/%d succeeded%n", CONCURRENCY,
                    CONCURRENCY, rounds, ok, total);
            System.out.printf("throughput: engine %.0f runs/s, raw %.0f runs/s (ratio %.2f)%n",
                    total / (engineNanos / 1e9), total / (rawNanos / 1e9), (double) engineNanos / rawNanos);
            if (ok != total) {
                throw new IllegalStateException("not every concurrent run succeeded");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static int runRound(ExecutorService pool, List<Workspace> spaces, SandboxEngine engine,
                                RunProgramSpec spec) throws Exception {
        List<Future<RunResult>> fs = new ArrayList<>();
        for (Workspace w : spaces) {
            fs.add(pool.submit(() -> engine.runner().runProgram(w, spec)));
        }
        int ok = 0;
        for (Future<RunResult> f : fs) {
            if (f.get().succeeded()) {
                ok++;
            }
        }
        return ok;
    }

    private static void rawRound(ExecutorService pool, List<ProgramLaunch> raws) throws Exception {
        List<Future<?>> fs = new ArrayList<>();
        for (ProgramLaunch l : raws) {
            fs.add(pool.submit(() -> {
                rawRun(l);
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
    }

    private static void check(RunResult r) {
        if (!r.succeeded()) {
            throw new IllegalStateException("engine run failed: " + r);
        }
    }

    /** Starts the same command line with an empty environment, drains both streams, waits. */
    private static void rawRun(ProgramLaunch l) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(l.argv()).directory(new java.io.File(l.directory()));
        pb.environment().clear();
        pb.environment().putAll(l.environment());
        Process p = pb.start();
        p.getOutputStream().close();
        Thread err = new Thread(() -> drain(p.getErrorStream()));
        err.start();
        drain(p.getInputStream());
        int rc = p.waitFor();
        err.join();
        if (rc != 0) {
            throw new IllegalStateException("raw run failed with " + rc);
        }
    }

    private static void drain(InputStream in) {
        try (in) {
            in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException ignored) {
            // Closed: nothing more to read.
        }
    }
}
