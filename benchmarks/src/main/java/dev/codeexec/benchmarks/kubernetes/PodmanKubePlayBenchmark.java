package dev.codeexec.benchmarks.kubernetes;

import dev.codeexec.benchmarks.Stats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A hardened workspace pod under {@code podman kube play}, the cluster-free stand-in the Kubernetes backend's spec
 * tests use, against a plain {@code podman run} of the same image as the raw baseline.
 * <ol>
 *   <li>Start: {@code podman kube play --network none} of the pod until {@code podman exec <container> true} first
 *       succeeds, against {@code podman run -d --network none <image> sleep} until the same; each sample is taken
 *       down before the next.</li>
 *   <li>{@code podman exec <container> true} in a played pod, against the same in the plain container.</li>
 * </ol>
 * The pod is written here as YAML (the spec the library generates, adapted as the tests adapt it: the local image,
 * absolute command, {@code PATH}); the benchmarks do not see the Kubernetes module's package-private builders. The
 * host's rlimit quirk is met as in the tests: {@code CONTAINERS_CONF} names {@code CODEEXEC_PODMAN_CONF} or a file
 * written here. The load average is printed before and after: the figures mean little on a busy machine.
 * Usage: {@code kubernetes.PodmanKubePlayBenchmark [start iterations [exec iterations]]}.
 */
public final class PodmanKubePlayBenchmark {

    private static final String IMAGE = "localhost/codeexec-python:bookworm";

    private static final String POD = """
            apiVersion: v1
            kind: Pod
            metadata:
              name: %s
            spec:
              automountServiceAccountToken: false
              enableServiceLinks: false
              restartPolicy: Never
              terminationGracePeriodSeconds: 1
              securityContext:
                runAsNonRoot: true
                runAsUser: 10001
                runAsGroup: 10001
                fsGroup: 10001
                seccompProfile: {type: RuntimeDefault}
              containers:
              - name: workspace
                image: %s
                imagePullPolicy: Never
                command: ["/bin/sh", "-c", "while :; do sleep 3600 & wait $!; done"]
                env:
                - {name: PATH, value: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
                - {name: HOME, value: /codeexec/workspace}
                securityContext:
                  allowPrivilegeEscalation: false
                  readOnlyRootFilesystem: true
                  privileged: false
                  runAsNonRoot: true
                  runAsUser: 10001
                  runAsGroup: 10001
                  capabilities: {drop: [ALL]}
                resources:
                  limits: {cpu: "1", memory: 1Gi, ephemeral-storage: 2Gi}
                  requests: {cpu: 250m, memory: 256Mi, ephemeral-storage: 256Mi}
                volumeMounts:
                - {name: workspace, mountPath: /codeexec}
                - {name: tmp, mountPath: /tmp}
              volumes:
              - {name: workspace, emptyDir: {sizeLimit: 512Mi}}
              - {name: tmp, emptyDir: {sizeLimit: 64Mi}}
            """;

    private static Path conf;

    private PodmanKubePlayBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int starts = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int execs = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        Path dir = Files.createTempDirectory("codeexec-podman-bench-");
        try {
            conf = containersConf(dir);
            System.out.println("load average before: " + loadAverage());
            start(dir, starts);
            exec(dir, execs);
            System.out.println("load average after:  " + loadAverage());
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void start(Path dir, int iterations) throws Exception {
        long[] play = new long[iterations];
        long[] run = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            Path yaml = writePod(dir, "bench-start-" + i);
            long t0 = System.nanoTime();
            podman("kube", "play", "--network", "none", yaml.toString());
            awaitExec("bench-start-" + i + "-workspace");
            play[i] = System.nanoTime() - t0;
            podman("kube", "down", yaml.toString());

            String name = "bench-run-" + i;
            t0 = System.nanoTime();
            podman("run", "-d", "--name", name, "--network", "none", IMAGE, "/bin/sleep", "infinity");
            awaitExec(name);
            run[i] = System.nanoTime() - t0;
            podman("rm", "-f", "-t", "0", name);
            if (i == 0) {
                System.out.printf("first start (cold): kube play %d ms, podman run %d ms%n",
                        play[0] / 1_000_000, run[0] / 1_000_000);
            }
        }
        System.out.println("start until exec works, kube play of the hardened pod: " + new Stats(play));
        System.out.println("start until exec works, podman run (baseline):          " + new Stats(run));
    }

    private static void exec(Path dir, int iterations) throws Exception {
        Path yaml = writePod(dir, "bench-exec");
        String plain = "bench-exec-plain";
        podman("kube", "play", "--network", "none", yaml.toString());
        podman("run", "-d", "--name", plain, "--network", "none", IMAGE, "/bin/sleep", "infinity");
        try {
            String pod = "bench-exec-workspace";
            awaitExec(pod);
            awaitExec(plain);
            for (int i = 0; i < 3; i++) {
                podman("exec", pod, "/bin/true");
                podman("exec", plain, "/bin/true");
            }
            long[] inPod = new long[iterations];
            long[] inPlain = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                long t0 = System.nanoTime();
                podman("exec", pod, "/bin/true");
                inPod[i] = System.nanoTime() - t0;
                t0 = System.nanoTime();
                podman("exec", plain, "/bin/true");
                inPlain[i] = System.nanoTime() - t0;
            }
            System.out.println("podman exec true, played pod:             " + new Stats(inPod));
            System.out.println("podman exec true, podman run (baseline):  " + new Stats(inPlain));
        } finally {
            podman("kube", "down", yaml.toString());
            podman("rm", "-f", "-t", "0", plain);
        }
    }

    private static Path writePod(Path dir, String name) throws IOException {
        return Files.writeString(dir.resolve(name + ".yaml"), String.format(POD, name, IMAGE));
    }

    /** Polls {@code podman exec true} until it succeeds (at most a minute). */
    private static void awaitExec(String container) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (run(List.of("podman", "exec", container, "/bin/true")) != 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("podman exec never worked in " + container);
            }
            Thread.sleep(10);
        }
    }

    private static void podman(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("podman"));
        cmd.addAll(List.of(args));
        int rc = run(cmd);
        if (rc != 0) {
            throw new IllegalStateException("failed (" + rc + "): " + cmd);
        }
    }

    private static int run(List<String> cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("CONTAINERS_CONF", conf.toString());
        Process p = pb.start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("timed out: " + cmd);
        }
        return p.exitValue();
    }

    private static Path containersConf(Path dir) throws IOException {
        String given = System.getenv("CODEEXEC_PODMAN_CONF");
        if (given != null && Files.isRegularFile(Path.of(given))) {
            return Path.of(given);
        }
        return Files.writeString(dir.resolve("containers.conf"),
                "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n");
    }

    private static String loadAverage() throws IOException {
        return Files.readString(Path.of("/proc/loadavg")).strip();
    }
}
