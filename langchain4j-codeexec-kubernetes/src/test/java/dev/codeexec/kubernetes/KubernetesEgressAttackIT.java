package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.network.EgressEvent;
import dev.codeexec.network.EgressLimits;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.FakeInternet;
import dev.codeexec.network.WorkspaceEgress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on the Kubernetes egress tunnel from inside a pod of the fake cluster, each beside its positive control in
 * the same run: a direct connection (to the stand-in internet, to the engine's gate socket) next to the same target
 * through the relay; a program that kills the relay, then connects; a program that writes frames of its own into the
 * relay's stdout: it runs as the same user, so it can take the relay's descriptor ({@code /proc/<relay>/fd/1} where
 * the runtime made the exec's pipes the pod user's, as runc does; {@code pidfd_getfd} where they are root's, as in the
 * fake pods). The relay is found by its script's first line in {@code /proc/<pid>/cmdline}.
 */
class KubernetesEgressAttackIT {

    /**
     * {@code proxy HOST:PORT} (a CONNECT through the relay, then ping), {@code direct IP PORT}, {@code unix PATH},
     * {@code kill} (SIGKILL to the relay, then wait until it is gone), {@code garbage} (bytes no frame starts with,
     * into the relay's stdout), {@code inject ID HOST:PORT} (an OPEN and a CONNECT request of the program's own into
     * the relay's stdout), {@code flood FIRST N} (N OPEN frames); one result line each.
     */
    private static final String ATTACK = String.join("\n",
            "import os, socket, struct, sys, time",
            "def relays():",
            "    found = []",
            "    for p in os.listdir('/proc'):",
            "        if not p.isdigit(): continue",
            "        try:",
            "            with open('/proc/%s/cmdline' % p, 'rb') as f: cmd = f.read().split(b'\\0')",
            "        except OSError: continue",
            "        if any(a.startswith(b'# codeexec-relay') for a in cmd): found.append(int(p))",
            "    return found",
            "def into_relay(data):",
            "    pid = relays()[0]",
            "    try:",
            "        fd = os.open('/proc/%d/fd/1' % pid, os.O_WRONLY)",
            "    except PermissionError:",
            "        import ctypes",
            "        libc = ctypes.CDLL(None, use_errno=True)",
            "        fd = libc.syscall(438, os.pidfd_open(pid), 1, 0)",
            "        if fd < 0: raise OSError(ctypes.get_errno(), 'pidfd_getfd')",
            "    os.write(fd, data)",
            "    os.close(fd)",
            "def frame(t, k, p=b''):",
            "    return struct.pack('>BII', t, k, len(p)) + p",
            "def proxy(target):",
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=60)",
            "    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())",
            "    head = b''",
            "    while b'\\r\\n\\r\\n' not in head:",
            "        c = s.recv(4096)",
            "        if not c: break",
            "        head += c",
            "    st = head.split(b'\\r\\n', 1)[0].decode('latin-1')",
            "    if ' 200 ' not in st: return st or 'closed'",
            "    s.sendall(b'ping')",
            "    return st + ' | ' + s.recv(4).decode()",
            "def run(a):",
            "    try:",
            "        if a[0] == 'proxy': return proxy(a[1])",
            "        if a[0] == 'direct':",
            "            socket.create_connection((a[1], int(a[2])), timeout=10)",
            "            return 'connected'",
            "        if a[0] == 'unix':",
            "            u = socket.socket(socket.AF_UNIX)",
            "            u.connect(a[1])",
            "            return 'connected'",
            "        if a[0] == 'kill':",
            "            pids = relays()",
            "            for p in pids: os.kill(p, 9)",
            "            for i in range(1200):",
            "                if not any(os.path.exists('/proc/%d' % p) for p in pids): break",
            "                time.sleep(0.05)",
            "            return 'killed %d' % len(pids)",
            "        if a[0] == 'garbage':",
            "            into_relay(b'\\xff' * 64)",
            "            return 'written'",
            "        if a[0] == 'inject':",
            "            k = int(a[1])",
            "            req = ('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\nping' % (a[2], a[2])).encode()",
            "            into_relay(frame(2, k) + frame(3, k, req))",
            "            return 'written'",
            "        if a[0] == 'flood':",
            "            into_relay(b''.join(frame(2, int(a[1]) + i) for i in range(int(a[2]))))",
            "            return 'written'",
            "    except OSError as e:",
            "        return 'error %s' % type(e).__name__",
            "for op in sys.argv[1:]:",
            "    print(op.split(' ')[0], '->', run(op.split(' ')), flush=True)");

    private static final EgressPolicy POLICY = EgressPolicy.builder().allow("allowed.test:*")
            .allow(FakeInternet.ADDRESS + ":*").build();

    private FakeInternet internet;
    private KubernetesEngine engine;
    private final Queue<EgressEvent> events = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @BeforeEach
    void start() throws Exception {
        internet = new FakeInternet();
    }

    @AfterEach
    void stop() throws Exception {
        if (engine != null) {
            engine.close();
        }
        internet.close();
    }

    private Workspace workspace(EgressLimits limits) {
        if (engine == null) {
            engine = KubernetesTesting.engine().egress(POLICY).egressProxy(EgressProxy.builder()
                    .resolver(FakeInternet.resolver()).limits(limits).listener(events::add)).build();
        }
        return engine.manager().createWorkspace("attack", WorkspacePolicy.DEFAULT);
    }

    private List<String> attack(Workspace ws, String... ops) {
        engine.fs().putFiles(ws, List.of(PutFile.of("attack.py", ATTACK)));
        List<String> args = new ArrayList<>(List.of("attack.py"));
        args.addAll(List.of(ops));
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args(args)
                .timeout(Duration.ofSeconds(240)).build());
        assertThat(r.stderr()).as("attack stderr").isEmpty();
        return r.stdout().lines().toList();
    }

    private String echo() {
        return "allowed.test:" + internet.echoPort();
    }

    @Test
    void should_reach_a_host_only_through_the_relay_never_directly_nor_through_the_gates_socket() {
        Workspace ws = workspace(EgressLimits.DEFAULT);
        String gate = engine.egress().orElseThrow().directory(ws.id()).resolve(WorkspaceEgress.SOCKET).toString();
        List<String> out = attack(ws, "proxy " + echo(), "direct " + FakeInternet.ADDRESS + " " + internet.echoPort(),
                "direct 127.0.0.1 " + internet.echoPort(), "unix " + gate);
        assertThat(out.get(0)).endsWith("| ping");
        assertThat(out.get(1)).startsWith("direct -> error");
        assertThat(out.get(2)).startsWith("direct -> error");
        assertThat(out.get(3)).startsWith("unix -> error");
        assertThat(internet.echoConnections.get()).as("only the relayed connection arrived").isEqualTo(1);
    }

    @Test
    void should_give_only_failed_connections_once_the_relay_is_killed_and_start_it_again_for_the_next_run() {
        Workspace ws = workspace(EgressLimits.DEFAULT);
        PodTunnel first = engine.workspaces().egress().tunnel(ws.id());
        List<String> out = attack(ws, "proxy " + echo(), "kill", "proxy " + echo(),
                "direct " + FakeInternet.ADDRESS + " " + internet.echoPort());
        assertThat(out.get(0)).endsWith("| ping");
        assertThat(out.get(1)).isEqualTo("kill -> killed 1");
        assertThat(out.get(2)).startsWith("proxy -> error");
        assertThat(out.get(3)).startsWith("direct -> error");
        assertThat(internet.echoConnections.get()).isEqualTo(1);
        Await.until("the engine saw the relay's exec end", () -> !first.alive());

        List<String> next = attack(ws, "proxy " + echo());
        assertThat(next.get(0)).endsWith("| ping");
        assertThat(engine.workspaces().egress().tunnel(ws.id())).isNotSameAs(first);
        assertThat(internet.echoConnections.get()).isEqualTo(2);
    }

    @Test
    void should_end_only_the_tunnel_a_program_wrote_garbage_into() {
        Workspace ws = workspace(EgressLimits.DEFAULT);
        Workspace other = workspace(EgressLimits.DEFAULT);
        PodTunnel attacked = engine.workspaces().egress().tunnel(ws.id());
        PodTunnel bystander = engine.workspaces().egress().tunnel(other.id());
        List<String> out = attack(ws, "proxy " + echo(), "garbage");
        assertThat(out).containsExactly("proxy -> HTTP/1.1 200 Connection established | ping", "garbage -> written");
        Await.until("the engine ended the tunnel that broke the format", () -> !attacked.alive());
        assertThat(bystander.alive()).isTrue();

        assertThat(attack(other, "proxy " + echo())).containsExactly(
                "proxy -> HTTP/1.1 200 Connection established | ping");
        assertThat(engine.workspaces().egress().tunnel(other.id())).isSameAs(bystander);
        assertThat(attack(ws, "proxy " + echo())).containsExactly(
                "proxy -> HTTP/1.1 200 Connection established | ping");
        assertThat(internet.echoConnections.get()).isEqualTo(3);
    }

    @Test
    void should_carry_connections_under_protocol_v4_whose_stdin_cannot_be_ended() {
        try (FakeCluster v4 = FakeCluster.startV4Only()) {
            engine = KubernetesTesting.engine(v4).egress(POLICY).egressProxy(EgressProxy.builder()
                    .resolver(FakeInternet.resolver()).listener(events::add)).build();
            Workspace ws = engine.manager().createWorkspace("v4", WorkspacePolicy.DEFAULT);
            List<String> out = attack(ws, "proxy " + echo(), "direct " + FakeInternet.ADDRESS + " "
                    + internet.echoPort());
            assertThat(out.get(0)).isEqualTo("proxy -> HTTP/1.1 200 Connection established | ping");
            assertThat(out.get(1)).startsWith("direct -> error");
            assertThat(engine.exec().protocol()).isEqualTo(ExecSocket.Protocol.V4);
            engine.close();
            engine = null;
        }
    }

    @Test
    void should_give_a_workspace_on_a_pod_of_the_warm_pool_its_own_tunnel() {
        engine = KubernetesTesting.engine().warmPool(1).egress(POLICY).egressProxy(EgressProxy.builder()
                .resolver(FakeInternet.resolver()).listener(events::add)).build();
        Workspace ws = engine.manager().createWorkspace("pooled", WorkspacePolicy.DEFAULT);
        List<String> out = attack(ws, "proxy " + echo(), "direct " + FakeInternet.ADDRESS + " "
                + internet.echoPort());
        assertThat(out.get(0)).endsWith("| ping");
        assertThat(out.get(1)).startsWith("direct -> error");
        assertThat(events).allMatch(e -> e.workspaceId().equals(ws.id()));
    }

    @Test
    void should_decide_connections_a_program_injected_at_the_gate_and_bound_how_many_are_carried() {
        Workspace ws = workspace(EgressLimits.DEFAULT.withMaxConnections(3));
        PodTunnel tunnel = engine.workspaces().egress().tunnel(ws.id());
        int bound = 3 + PodEgress.MARGIN;
        List<String> out = attack(ws, "proxy " + echo(),
                "inject 1000001 other.test:" + internet.echoPort(),
                "inject 1000002 127.0.0.1:" + internet.echoPort(),
                "flood 2000000 40", "proxy " + echo());
        assertThat(out.get(0)).endsWith("| ping");
        assertThat(out.subList(1, 4)).allMatch(l -> l.endsWith("-> written"));
        // the program's own connection after the flood: refused by the gate's limit or the tunnel's bound
        assertThat(out.get(4)).startsWith("proxy -> HTTP/1.1 429 ");
        Await.until("the gate denied both injected requests", () -> events.stream().filter(e ->
                e.outcome() == EgressEvent.Outcome.DENIED && (e.toString().contains("other.test")
                        || e.toString().contains("127.0.0.1:"))).count() == 2);
        assertThat(internet.echoConnections.get()).as("the denied injections reached nothing").isEqualTo(1);
        assertThat(tunnel.alive()).isTrue();
        assertThat(tunnel.peakConnections()).isEqualTo(bound);

        // when the run ended, the gate ended its connections, and the relay disowned those it never had
        Await.until("the injected connections are forgotten", () -> tunnel.connections() == 0);
        assertThat(attack(ws, "proxy " + echo()).get(0)).endsWith("| ping");
    }
}
