package dev.codeexec.benchmarks.kubernetes;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.kubernetes.FakeClusterHandle;
import dev.codeexec.kubernetes.KubernetesEngine;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The Kubernetes backend against the fake cluster of its tests (fabric8's mock API server, pods as bubblewrap
 * namespaces of this host, the real exec websocket protocol), each figure beside its raw baseline in the same run:
 * <ol>
 *   <li>workspace creation, cold (a pod created, made Ready by the fake kubelet, the layout made, the launcher
 *       probed) and warm (a pooled Ready pod adopted), against starting the same pod's namespaces directly;</li>
 *   <li>{@code runProgram(true)} through the engine (the run wrapper over one exec, protocol v5), against a bare exec
 *       of {@code true} over the same API server (fabric8's own exec, v4) and against {@code true} run directly in
 *       the pod's namespaces (nsenter: no API server, no websocket).</li>
 * </ol>
 * Then, in the same run, {@link PodmanKubePlayBenchmark}: the same hardened pod under {@code podman kube play}, start
 * until exec works and {@code podman exec true}. A real cluster adds scheduling, image pulls, the kubelet's and the
 * API server's network hops: these figures bound the engine's own share, not a cluster's latency.
 * Usage: {@code kubernetes.KubernetesEngineBenchmark [workspaces [execs]]}.
 */
public final class KubernetesEngineBenchmark {

    private KubernetesEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int creations = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int execs = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        if (!FakeClusterHandle.available()) {
            System.out.println("the fake cluster needs bubblewrap, nsenter and root; nothing measured");
            return;
        }
        System.out.println("load average before: " + loadAverage());
        try (FakeClusterHandle cluster = FakeClusterHandle.start()) {
            creation(cluster, creations);
            exec(cluster, execs);
        }
        System.out.println("load average after:  " + loadAverage());
        System.out.println();
        PodmanKubePlayBenchmark.main(new String[] {"5", "20"});
    }

    private static void creation(FakeClusterHandle cluster, int n) throws Exception {
        long[] cold = new long[n];
        long[] warm = new long[n];
        try (KubernetesEngine coldEngine = engine(cluster).build();
             KubernetesEngine warmEngine = engine(cluster).warmPool(1).build()) {
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                Workspace ws = coldEngine.manager().createWorkspace("cold", WorkspacePolicy.DEFAULT);
                cold[i] = System.nanoTime() - t0;
                coldEngine.manager().cleanup(ws);

                awaitPooledPod(cluster, warmEngine);
                t0 = System.nanoTime();
                ws = warmEngine.manager().createWorkspace("warm", WorkspacePolicy.DEFAULT);
                warm[i] = System.nanoTime() - t0;
                warmEngine.manager().cleanup(ws);
            }
        }
        Stats c = new Stats(cold);
        Stats w = new Stats(warm);
        System.out.println("createWorkspace, cold (pod created and Ready, layout, probe): " + c);
        System.out.println("createWorkspace, warm (a pooled pod adopted, layout, probe): " + w
                + String.format("  warm/cold p50 %.2f", w.median() / c.median()));
    }

    /** Waits until the warm engine's pool holds a Ready pod (it refills in the background). */
    private static void awaitPooledPod(FakeClusterHandle cluster, KubernetesEngine engine) throws Exception {
        for (int i = 0; i < 6000; i++) {
            List<Pod> pooled = cluster.client().pods().withLabel("dev.codeexec/workspace", "pool")
                    .withLabel("dev.codeexec/engine", engine.instanceId()).list().getItems();
            if (pooled.stream().anyMatch(p -> p.getStatus() != null && p.getStatus().getConditions() != null
                    && p.getStatus().getConditions().stream().anyMatch(
                            c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))) {
                return;
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("the warm pool did not refill within a minute");
    }

    private static void exec(FakeClusterHandle cluster, int n) throws Exception {
        long[] engineRun = new long[n];
        long[] bareExec = new long[n];
        long[] direct = new long[n];
        try (KubernetesEngine engine = engine(cluster).build()) {
            Workspace ws = engine.manager().createWorkspace("exec", WorkspacePolicy.DEFAULT);
            String pod = FakeClusterHandle.podOf(engine, ws);
            RunProgramSpec spec = RunProgramSpec.builder("true").build();
            for (int i = -3; i < n; i++) { // three rounds of warm-up
                long t0 = System.nanoTime();
                int rc = engine.runner().runProgram(ws, spec).exitCode();
                long t1 = System.nanoTime();
                int rc2;
                try (var w = cluster.client().pods().withName(pod).inContainer("workspace")
                        .writingOutput(new ByteArrayOutputStream()).exec("true")) {
                    rc2 = w.exitCode().get();
                }
                long t2 = System.nanoTime();
                int rc3 = cluster.execDirect(pod, List.of("true"));
                long t3 = System.nanoTime();
                if (rc != 0 || rc2 != 0 || rc3 != 0) {
                    throw new IllegalStateException("true failed: " + rc + " " + rc2 + " " + rc3);
                }
                if (i >= 0) {
                    engineRun[i] = t1 - t0;
                    bareExec[i] = t2 - t1;
                    direct[i] = t3 - t2;
                }
            }
        }
        Stats e = new Stats(engineRun);
        Stats b = new Stats(bareExec);
        Stats d = new Stats(direct);
        System.out.println("runProgram(true) through the engine (wrapper, v5): " + e);
        System.out.println("bare exec of true (fabric8, v4):                   " + b
                + String.format("  engine/bare p50 %.2f", e.median() / b.median()));
        System.out.println("true directly in the pod (nsenter):                " + d
                + String.format("  engine/direct p50 %.2f", e.median() / d.median()));
    }

    private static KubernetesEngine.Builder engine(FakeClusterHandle cluster) {
        return KubernetesEngine.builder().client(cluster.client()).image("codeexec-python:bookworm")
                .sweepLeftovers(false);
    }

    private static String loadAverage() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).trim();
    }
}
