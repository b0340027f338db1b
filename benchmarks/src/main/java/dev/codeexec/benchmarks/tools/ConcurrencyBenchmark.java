package dev.codeexec.benchmarks.tools;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.AdditionalPermissions;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.spi.ProgramLaunch;
import dev.langchain4j.invocation.InvocationContext;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/**
 * Conversations in parallel through the tools: 1, 8, 32 and 128 conversations, each calling {@code workspace_exec}
 * (the {@code @Tool} method, {@code echo hello} through {@code bash -c}, clean environment) in its own workspace,
 * against the same number of threads starting the same program raw ({@link ProcessBuilder}, both streams drained) in
 * the same run, on the local engine and on the sandbox. The raw program is the command line the engine launches,
 * without its control groups: {@link SandboxEngine#plannedLaunch} for the sandbox, the parent-death and namespace
 * wrappers around {@code bash -c} for the local engine. The ratio is then what the runtime adds under concurrency
 * (threads, locks, the tool layer's listing and result), not the cost of starting a process. A third contender, the
 * engine's own runner ({@code engine.runner().runProgram}, same spec, a workspace of its own per thread), splits that
 * ratio into the engine's share (runner / raw) and the tool layer's (tool / runner).
 *
 * <p>Reported per level: throughput (calls per second over the whole burst) and the ratios tool / raw, runner / raw
 * and tool / runner of the time the bursts took, latency p50, p90 and p99 of a call (and the ratios tool / raw of p50
 * and p90), the host's load average right after the level, and the JVM's live threads and open descriptors at the
 * peak (sampled every 5 ms during the burst) and right after it, and, once per engine, after the idle threads'
 * keep-alive (65 s, {@code -Dcodeexec.bench.settleMillis}) with the engine still open, and after it is closed. Raw,
 * runner and tool bursts alternate, twice per level, so drift hits all three.
 *
 * <p>Usage: {@code tools.ConcurrencyBenchmark [engines] [levels] [calls]}, defaults {@code local,sandbox},
 * {@code 1,8,32,128} and {@code 256}. Each conversation makes {@code max(8, calls / level)} calls per burst.
 */
public final class ConcurrencyBenchmark {

    private static final String COMMAND = "echo hello";
    /**
     * What the local engine starts for the command, without its control groups: the parent-death signal, the shell
     * that would join the groups, the PID namespace, then {@code bash -c}.
     */
    private static final List<String> LOCAL_WRAPPERS_AND_COMMAND = List.of("/usr/bin/setpriv", "--pdeathsig", "KILL",
            "--", "/bin/sh", "-c", "exec \"$@\"", "codeexec-run", "/usr/bin/unshare", "--pid", "--fork",
            "--kill-child", "--", "/bin/bash", "-c", COMMAND);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ConcurrencyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        List<String> engines = List.of((args.length > 0 ? args[0] : "local,sandbox").split(","));
        int[] levels = Arrays.stream((args.length > 1 ? args[1] : "1,8,32,128").split(","))
                .mapToInt(Integer::parseInt).toArray();
        int perBurst = args.length > 2 ? Integer.parseInt(args[2]) : 256;
        for (String name : engines) {
            measure(name, levels, perBurst);
        }
    }

    private static void measure(String name, int[] levels, int perBurst) throws Exception {
        Engine engine = name.equals("sandbox") ? SandboxEngine.create() : LocalEngine.create();
        System.out.println("== " + name + " engine, workspace_exec '" + COMMAND + "' per conversation");
        System.out.println("conversations | calls | tool calls/s | raw runs/s | ratio tool/raw | ratio runner/raw"
                + " | ratio tool/runner | tool p50 / p90 / p99 ms | runner p50 / p90 ms | raw p50 / p90 / p99 ms"
                + " | ratio tool/raw p50 / p90 | threads peak / after | fds peak / after | load");
        Counts idleBefore = Counts.now();
        try (engine; CodeExecution exec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceTools tools = exec.tools();
            RunProgramSpec spec = RunProgramSpec.shell(COMMAND).cleanEnv(true)
                    .timeout(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS)).build();
            for (int level : levels) {
                int calls = Math.max(8, perBurst / level);
                List<InvocationContext> conversations = new ArrayList<>();
                List<ProgramLaunch> raws = new ArrayList<>();
                List<Workspace> runnerWorkspaces = new ArrayList<>();
                for (int i = 0; i < level; i++) {
                    InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                            .chatMemoryId(name + "-" + level + "-" + i).timestampNow().build();
                    check(tools.workspaceExec(COMMAND, null, null, null, null, null, ctx)); // creates the workspace
                    conversations.add(ctx);
                    Workspace ws = engine.manager().createWorkspace("raw-" + level + "-" + i, WorkspacePolicy.DEFAULT);
                    runnerWorkspaces.add(engine.manager().createWorkspace("runner-" + level + "-" + i,
                            WorkspacePolicy.DEFAULT));
                    raws.add(engine instanceof SandboxEngine s ? s.plannedLaunch(ws, spec, AdditionalPermissions.NONE)
                            : new ProgramLaunch(LOCAL_WRAPPERS_AND_COMMAND, Map.of("PATH", LocalEngine.CLEAN_PATH),
                            ws.path(), null, spec.timeout(), 1 << 20, null));
                }
                Burst tool = new Burst();
                Burst raw = new Burst();
                Burst runner = new Burst();
                for (int round = 0; round < 2; round++) {
                    raw.add(burst(level, calls, i -> () -> rawRun(raws.get(i))));
                    runner.add(burst(level, calls, i -> () -> check(engine.runner().runProgram(runnerWorkspaces.get(i),
                            spec))));
                    tool.add(burst(level, calls, i -> () -> check(tools.workspaceExec(COMMAND, null, null, null, null,
                            null, conversations.get(i)))));
                }
                Counts after = Counts.now();
                System.out.println(String.format(Locale.ROOT,
                        "%13d | %5d | %12.0f | %10.0f | %14.2f | %16.2f | %17.2f | %6.1f / %6.1f / %-6.1f"
                                + " | %6.1f / %-6.1f | %6.1f / %6.1f / %-6.1f | %4.2f / %4.2f | %5d / %-5d"
                                + " | %4d / %-4d | %s",
                        level, tool.calls, tool.throughput(), raw.throughput(), tool.nanos / (double) raw.nanos,
                        runner.nanos / (double) raw.nanos, tool.nanos / (double) runner.nanos,
                        tool.percentile(50), tool.percentile(90), tool.percentile(99),
                        runner.percentile(50), runner.percentile(90),
                        raw.percentile(50), raw.percentile(90), raw.percentile(99),
                        tool.percentile(50) / raw.percentile(50), tool.percentile(90) / raw.percentile(90),
                        Math.max(tool.peakThreads, raw.peakThreads), after.threads,
                        Math.max(tool.peakFds, raw.peakFds), after.fds, loadAverage()));
            }
            System.out.println("after 65 s idle, engine open: " + settled(idleBefore));
        }
        Counts closed = Counts.now();
        System.out.println("after close: threads " + closed.threads + ", descriptors " + closed.fds);
    }

    /** The host's load average over 1, 5 and 15 minutes, as {@code /proc/loadavg} gives it. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }

    /** Live threads and descriptors once the idle threads' keep-alive has passed, next to those before the engine. */
    private static String settled(Counts before) throws InterruptedException {
        Thread.sleep(Long.getLong("codeexec.bench.settleMillis", 65_000));
        Counts after = Counts.now();
        return "threads " + after.threads + " (" + before.threads + " before the engine), descriptors " + after.fds
                + " (" + before.fds + " before), launcher threads " + after.launchers;
    }

    private interface Call {
        void run() throws Exception;
    }

    /** One burst: {@code level} threads released at once, each making {@code calls} calls. */
    private static Burst burst(int level, int calls, IntFunction<Call> callOf) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(level);
        CyclicBarrier start = new CyclicBarrier(level + 1);
        long[][] latencies = new long[level][calls];
        AtomicBoolean sampling = new AtomicBoolean(true);
        AtomicInteger peakThreads = new AtomicInteger();
        AtomicInteger peakFds = new AtomicInteger();
        Thread sampler = new Thread(() -> {
            while (sampling.get()) {
                peakThreads.accumulateAndGet(THREADS.getThreadCount(), Math::max);
                peakFds.accumulateAndGet(Counts.openDescriptors(), Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "bench-sampler");
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < level; i++) {
                int conversation = i;
                Call call = callOf.apply(i);
                fs.add(pool.submit(() -> {
                    start.await();
                    for (int k = 0; k < calls; k++) {
                        long t0 = System.nanoTime();
                        call.run();
                        latencies[conversation][k] = System.nanoTime() - t0;
                    }
                    return null;
                }));
            }
            sampler.start();
            start.await();
            long t0 = System.nanoTime();
            for (Future<?> f : fs) {
                f.get();
            }
            long took = System.nanoTime() - t0;
            Burst b = new Burst();
            b.nanos = took;
            b.calls = level * calls;
            b.latencies = Arrays.stream(latencies).flatMapToLong(Arrays::stream).toArray();
            sampling.set(false);
            sampler.join();
            b.peakThreads = peakThreads.get();
            b.peakFds = peakFds.get();
            return b;
        } finally {
            sampling.set(false);
            pool.shutdownNow();
        }
    }

    /** What bursts of one kind took, together. */
    private static final class Burst {
        long nanos;
        int calls;
        long[] latencies = new long[0];
        int peakThreads;
        int peakFds;

        void add(Burst b) {
            nanos += b.nanos;
            calls += b.calls;
            long[] all = Arrays.copyOf(latencies, latencies.length + b.latencies.length);
            System.arraycopy(b.latencies, 0, all, latencies.length, b.latencies.length);
            latencies = all;
            peakThreads = Math.max(peakThreads, b.peakThreads);
            peakFds = Math.max(peakFds, b.peakFds);
        }

        double throughput() {
            return calls / (nanos / 1e9);
        }

        /** Latency percentile in milliseconds. */
        double percentile(double p) {
            return new Stats(latencies).percentile(p) / 1000.0;
        }
    }

    /** Live threads, open descriptors and launcher threads of this JVM. */
    private record Counts(int threads, int fds, long launchers) {
        static Counts now() {
            long launchers = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().contains("-launcher-")).count();
            return new Counts(THREADS.getThreadCount(), openDescriptors(), launchers);
        }

        static int openDescriptors() {
            try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
                return (int) s.count();
            } catch (IOException e) {
                return -1;
            }
        }
    }

    private static void check(RunResult r) {
        if (r.exitCode() != 0) {
            throw new IllegalStateException("runner run failed: " + r);
        }
    }

    private static void check(String toolText) {
        if (!toolText.startsWith("exit_code: 0 ")) {
            throw new IllegalStateException("tool run failed: " + toolText);
        }
    }

    /** Starts the launch with its environment, drains both streams, waits; fails unless it exits 0. */
    private static void rawRun(ProgramLaunch l) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(l.argv()).directory(new File(l.directory()));
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
