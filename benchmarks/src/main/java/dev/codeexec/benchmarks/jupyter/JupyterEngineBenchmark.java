package dev.codeexec.benchmarks.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.JupyterEngine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * JupyterEngine against Debian's jupyter_client, each with an ipykernel of the same kind
 * ({@code /usr/bin/python3 -m ipykernel_launcher}), measured in the same run.
 * <ol>
 *   <li>Round trip of {@code 1+1}: {@code engine.executeCode(ws, ...)} (send the cell, wait for its
 *       {@code execute_reply} and {@code status: idle}, assemble the result, list {@code out/}) against
 *       {@code BlockingKernelClient.execute_interactive("1+1")} (the same completion rule) in a Python process. Both
 *       kernels live side by side; blocks of samples alternate between the contenders so drift hits both.</li>
 *   <li>Kernel start: a new workspace's first cell (start the kernel, handshake, {@code 1+1}) against
 *       {@code KernelManager.start_kernel()} + {@code wait_for_ready()} + {@code 1+1}, alternating.</li>
 * </ol>
 * Usage: {@code jupyter.JupyterEngineBenchmark [round trips] [starts]} (defaults 400 and 8). Needs
 * {@code /usr/bin/python3} with ipykernel and jupyter_client (Debian: python3-ipykernel).
 */
public final class JupyterEngineBenchmark {

    private static final String PYTHON = "/usr/bin/python3";
    private static final int BLOCK = 50;
    private static final int WARMUP = 500;

    /** The baseline: reads commands from stdin, answers each with a JSON list of nanoseconds. */
    private static final String BASELINE = """
            import sys, json, time
            from jupyter_client.manager import KernelManager

            def quiet(msg):
                pass

            def start():
                t0 = time.perf_counter_ns()
                km = KernelManager(kernel_name='python3')  # argv[0] python3 becomes sys.executable
                km.start_kernel()
                kc = km.client()
                kc.start_channels()
                kc.wait_for_ready(timeout=60)
                r = kc.execute_interactive('1+1', timeout=60, output_hook=quiet)
                assert r['content']['status'] == 'ok', r
                return km, kc, time.perf_counter_ns() - t0

            def stop(km, kc):
                kc.stop_channels()
                km.shutdown_kernel()

            main = None
            for line in sys.stdin:
                cmd = line.split()
                if cmd[0] == 'start':
                    km, kc, ns = start()
                    stop(km, kc)
                    print(json.dumps([ns]), flush=True)
                elif cmd[0] == 'rt':
                    if main is None:
                        main = start()
                    kc = main[1]
                    out = []
                    for _ in range(int(cmd[1])):
                        t0 = time.perf_counter_ns()
                        r = kc.execute_interactive('1+1', timeout=60, output_hook=quiet)
                        out.append(time.perf_counter_ns() - t0)
                        assert r['content']['status'] == 'ok', r
                    print(json.dumps(out), flush=True)
                else:
                    break
            if main is not None:
                stop(main[0], main[1])
            """;

    private JupyterEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int roundTrips = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int starts = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        Process py = new ProcessBuilder(PYTHON, "-u", "-c", BASELINE).redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        Baseline baseline = new Baseline(py);
        try (JupyterEngine engine = JupyterEngine.builder().python(PYTHON).build()) {
            Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
            long t0 = System.nanoTime();
            check(cell(engine, ws));
            long firstKernel = System.nanoTime() - t0;

            // Warm-up of both: the JIT (compiling on the same two cores would slow the kernel too) and the kernels'
            // first executions.
            for (int i = 0; i < WARMUP; i++) {
                check(cell(engine, ws));
            }
            baseline.ask("rt " + WARMUP);

            long[] eng = new long[roundTrips];
            long[] base = new long[roundTrips];
            for (int done = 0; done < roundTrips; done += BLOCK) {
                int n = Math.min(BLOCK, roundTrips - done);
                for (int i = 0; i < n; i++) {
                    long s = System.nanoTime();
                    CodeExecutionResult r = cell(engine, ws);
                    eng[done + i] = System.nanoTime() - s;
                    check(r);
                }
                long[] b = baseline.ask("rt " + n);
                System.arraycopy(b, 0, base, done, n);
            }
            Stats e = new Stats(eng);
            Stats b = new Stats(base);
            System.out.println("JupyterEngine.executeCode(1+1):          " + e);
            System.out.println("jupyter_client execute_interactive(1+1): " + b);
            System.out.printf("ratio engine / jupyter_client (median):  %.3f (target <= 1.0)%n", e.median() / b.median());
            System.out.printf("ratio engine / jupyter_client (p10):     %.3f%n", e.percentile(10) / b.percentile(10));
            System.out.printf("ratio engine / jupyter_client (p90):     %.3f%n", e.percentile(90) / b.percentile(90));
            System.out.printf("load average during the run:             %.2f (on %d CPUs)%n",
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors());

            long[] engStart = new long[starts];
            long[] baseStart = new long[starts];
            for (int i = 0; i < starts; i++) {
                Workspace fresh = engine.manager().createWorkspace("start", WorkspacePolicy.DEFAULT);
                long s = System.nanoTime();
                check(cell(engine, fresh));
                engStart[i] = System.nanoTime() - s;
                engine.manager().cleanup(fresh);
                baseStart[i] = baseline.ask("start")[0];
            }
            Stats es = new Stats(engStart);
            Stats bs = new Stats(baseStart);
            System.out.printf("kernel start + first 1+1, engine:         median %.0f ms, p10 %.0f ms, p90 %.0f ms (n=%d)%n",
                    es.median() / 1000, es.percentile(10) / 1000, es.percentile(90) / 1000, starts);
            System.out.printf("kernel start + first 1+1, jupyter_client: median %.0f ms, p10 %.0f ms, p90 %.0f ms (n=%d)%n",
                    bs.median() / 1000, bs.percentile(10) / 1000, bs.percentile(90) / 1000, starts);
            System.out.printf("ratio engine / jupyter_client (start):   %.3f%n", es.median() / bs.median());
            System.out.printf("first kernel of an engine (locating Python included): %d ms%n", firstKernel / 1_000_000);
        } finally {
            baseline.close();
        }
    }

    private static CodeExecutionResult cell(JupyterEngine engine, Workspace ws) {
        return engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "1+1")));
    }

    private static void check(CodeExecutionResult r) {
        if (r.exitCode() != 0 || !r.output().equals("2\n")) {
            throw new IllegalStateException("engine cell failed: " + r);
        }
    }

    /** The Python process: one command line in, one JSON line out. */
    private static final class Baseline implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BufferedReader out;
        private final ObjectMapper json = new ObjectMapper();

        Baseline(Process process) {
            this.process = process;
            this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        long[] ask(String command) throws IOException {
            in.write(command + "\n");
            in.flush();
            String line = out.readLine();
            if (line == null) {
                throw new IllegalStateException("the jupyter_client baseline ended (is python3-jupyter-client "
                        + "installed for " + PYTHON + "?)");
            }
            JsonNode n = json.readTree(line);
            long[] v = new long[n.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = n.get(i).asLong();
            }
            return v;
        }

        @Override
        public void close() throws Exception {
            try {
                in.write("quit\n");
                in.close();
            } catch (IOException ignored) {
                // Already gone.
            }
            if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
