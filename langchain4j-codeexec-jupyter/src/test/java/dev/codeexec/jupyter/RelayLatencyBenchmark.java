package dev.codeexec.jupyter;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A {@code 1+1} cell through the relay ({@link BoundaryKernels} on host runs) against the same cell on the Jupyter
 * engine, in the same run, interleaved: p50 and p90 of 200 cells each after 20 warm-up cells. Not part of the suite
 * (run it by name); it prints and asserts nothing.
 */
class RelayLatencyBenchmark {

    @Test
    void measure() {
        try (JupyterEngine host = JupyterEngine.builder().python(BoundaryKernelsIT.PYTHON).build()) {
            Workspace direct = host.manager().createWorkspace("direct", WorkspacePolicy.DEFAULT);
            Workspace relayed = host.manager().createWorkspace("relayed", WorkspacePolicy.DEFAULT);
            try (BoundaryKernels kernels = new BoundaryKernels("bench",
                    KernelOptions.builder().python(BoundaryKernelsIT.PYTHON).build(), host::prepare, host.fs())) {
                var relayCells = kernels.cells(relayed);
                var hostCells = host.cells(direct);
                long[] r = new long[200];
                long[] h = new long[200];
                for (int i = -20; i < 200; i++) {
                    long t0 = System.nanoTime();
                    relayCells.run("1+1", Duration.ofSeconds(60), 1 << 20);
                    long t1 = System.nanoTime();
                    hostCells.run("1+1", Duration.ofSeconds(60), 1 << 20);
                    long t2 = System.nanoTime();
                    if (i >= 0) {
                        r[i] = t1 - t0;
                        h[i] = t2 - t1;
                    }
                }
                System.out.printf("1+1 cell: relay p50 %.2f ms p90 %.2f ms; jupyter engine p50 %.2f ms p90 %.2f ms%n",
                        pct(r, 50), pct(r, 90), pct(h, 50), pct(h, 90));
            }
        }
    }

    private static double pct(long[] v, int p) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * p / 100)] / 1e6;
    }
}
