package dev.codeexec.benchmarks.kubernetes;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.kubernetes.FakeClusterHandle;
import dev.codeexec.kubernetes.KubernetesEngine;
import dev.codeexec.network.EgressGate;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A 1 MB download through the Kubernetes egress tunnel (a relay in a pod of the fake cluster, the exec's websocket,
 * the engine's demultiplexer, the workspace's gate) against two baselines in the same run, each timed by the same
 * Python client around the download alone (no run start-up): a direct loopback connection on this host, and the
 * core's gate on a Unix-domain socket reached directly from this host (the proxy without the tunnel: the path a
 * container's forwarder hands its connections to). The server on {@code 127.0.0.2} writes 1 MB and closes.
 * Usage: {@code kubernetes.KubernetesEgressBenchmark [rounds]} (default 15).
 */
public final class KubernetesEgressBenchmark {

    private static final int SIZE = 1 << 20;
    private static final String CLIENT = String.join("\n",
            "import socket, sys, time",
            "mode, a, b, target = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]",
            "t = time.perf_counter()",
            "if mode == 'unix':",
            "    s = socket.socket(socket.AF_UNIX); s.connect(a)",
            "elif mode == 'direct':",
            "    s = socket.create_connection((a, int(b)))",
            "else:",
            "    s = socket.create_connection((a, int(b)))",
            "if mode != 'direct':",
            "    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())",
            "    head = b''",
            "    while b'\\r\\n\\r\\n' not in head: head += s.recv(1)",
            "n = 0",
            "while True:",
            "    c = s.recv(65536)",
            "    if not c: break",
            "    n += len(c)",
            "print(n, int((time.perf_counter() - t) * 1e9))");

    private KubernetesEgressBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        if (!FakeClusterHandle.available()) {
            System.out.println("the fake cluster needs bubblewrap, nsenter and root; nothing measured");
            return;
        }
        try (ServerSocket server = new ServerSocket(0, 64, InetAddress.getByName("127.0.0.2"))) {
            Thread serving = new Thread(() -> serve(server), "bench-server");
            serving.setDaemon(true);
            serving.start();
            String target = "127.0.0.2:" + server.getLocalPort();
            EgressPolicy policy = EgressPolicy.allowing("127.0.0.2:*");
            Path dir = Files.createTempDirectory("k8s-egress-bench");
            Path client = Files.writeString(dir.resolve("client.py"), CLIENT);
            Path socket = dir.resolve("gate.sock");
            long[] tunnel = new long[rounds];
            long[] gate = new long[rounds];
            long[] direct = new long[rounds];
            try (FakeClusterHandle cluster = FakeClusterHandle.start();
                 KubernetesEngine engine = KubernetesEngine.builder().client(cluster.client())
                         .image("codeexec-python:bookworm").sweepLeftovers(false).egress(policy).build();
                 EgressProxy proxy = EgressProxy.builder().build();
                 EgressGate unix = proxy.openUnix("bench", policy, socket)) {
                Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
                engine.fs().putFiles(ws, List.of(PutFile.of("client.py", CLIENT)));
                for (int i = -2; i < rounds; i++) { // two rounds of warm-up
                    long t = inPod(engine, ws, target);
                    long g = onHost(client, "unix", socket.toString(), "-", target);
                    long d = onHost(client, "direct", "127.0.0.2", Integer.toString(server.getLocalPort()), target);
                    if (i >= 0) {
                        tunnel[i] = t;
                        gate[i] = g;
                        direct[i] = d;
                    }
                }
            }
            Stats t = new Stats(tunnel);
            Stats g = new Stats(gate);
            Stats d = new Stats(direct);
            System.out.println("1 MB, direct loopback (host):         " + d);
            System.out.println("1 MB, the gate's Unix socket (host):  " + g);
            System.out.println("1 MB, through the pod's tunnel:       " + t);
            System.out.printf("tunnel/gate p50 %.1f, tunnel/direct p50 %.1f%n", t.median() / g.median(),
                    t.median() / d.median());
        }
    }

    private static long inPod(KubernetesEngine engine, Workspace ws, String target) {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3")
                .args("client.py", "proxy", "127.0.0.1", "3128", target).timeout(Duration.ofMinutes(2)).build());
        return parse(r.stdout() + r.stderr());
    }

    private static long onHost(Path client, String mode, String a, String b, String target) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("python3", client.toString(), mode, a, b, target));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return parse(out);
    }

    private static long parse(String out) {
        String[] f = out.strip().split(" ");
        if (f.length != 2 || Integer.parseInt(f[0]) != SIZE) {
            throw new IllegalStateException("the client did not read 1 MB: " + out);
        }
        return Long.parseLong(f[1]);
    }

    private static void serve(ServerSocket server) {
        byte[] mb = new byte[SIZE];
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread w = new Thread(() -> {
                    try (s; OutputStream out = s.getOutputStream()) {
                        out.write(mb);
                    } catch (IOException e) {
                        // the client went away
                    }
                });
                w.setDaemon(true);
                w.start();
            } catch (IOException e) {
                return;
            }
        }
    }
}
