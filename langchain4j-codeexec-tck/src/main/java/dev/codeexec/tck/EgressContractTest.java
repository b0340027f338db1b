package dev.codeexec.tck;

import dev.codeexec.network.EgressApproval;
import dev.codeexec.network.EgressApprover;
import dev.codeexec.network.EgressLimits;
import dev.codeexec.network.EgressEvent;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.FakeInternet;
import dev.codeexec.network.WorkspaceEgress;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every engine that declares {@link EgressControl#PROXY} must hold, proven from inside its programs with nothing
 * but Python's {@code socket} module (every backend's image has it): the proxy is the only way out, it decides on the
 * names and addresses it connects to, and refusals say what is allowed. Each refusal is paired with the allowed
 * connection it differs from, in the same run. The "internet" is {@link FakeInternet} on this host's loopback; the
 * policy allows its address as a deployment allows an internal range, so the non-public protection is tested with
 * other addresses. A backend's test extends this with how it makes an engine.
 */
public abstract class EgressContractTest {

    /** The engine's policy in these tests. */
    protected static final EgressPolicy POLICY = EgressPolicy.builder()
            .allow("allowed.test:*").allow("rebind.test:*").allow("metadata.test:*")
            .allow(FakeInternet.ADDRESS + ":*").build();

    /**
     * The program side of the tests: {@code get HOST PORT PATH} (a plain HTTP request through the proxy),
     * {@code connect HOST:PORT} (a tunnel that sends {@code ping} and reads the echo), {@code direct IP PORT} (no
     * proxy), {@code resolve NAME}, {@code udp IP PORT}, {@code hold N HOST:PORT} (N tunnels at once), {@code until-refused HOST:PORT} (tunnels
     * until one is refused with an answer; one ended without an answer, while the proxy goes down, is tried again); one result line each.
     */
    protected static final String CLIENT = String.join("\n",
            "import os, socket, sys",
            "def proxy():",
            "    h, p = os.environ['HTTP_PROXY'].split('://', 1)[1].rstrip('/').rsplit(':', 1)",
            "    return h, int(p)",
            "def head(s):",
            "    data = b''",
            "    while b'\\r\\n\\r\\n' not in data:",
            "        chunk = s.recv(4096)",
            "        if not chunk: break",
            "        data += chunk",
            "    return data",
            "def status(data):",
            "    return data.split(b'\\r\\n', 1)[0].decode('latin-1')",
            "def tunnel(target):",
            "    s = socket.create_connection(proxy(), timeout=60)",
            "    s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())",
            "    return s, status(head(s))",
            "def run(args):",
            "    op = args[0]",
            "    try:",
            "        if op == 'get':",
            "            s = socket.create_connection(proxy(), timeout=60)",
            "            s.sendall(('GET http://%s:%s%s HTTP/1.1\\r\\nHost: %s:%s\\r\\n\\r\\n'",
            "                       % (args[1], args[2], args[3], args[1], args[2])).encode())",
            "            data = b''",
            "            while True:",
            "                chunk = s.recv(65536)",
            "                if not chunk: break",
            "                data += chunk",
            "            return '%s | %s' % (status(data), data.split(b'\\r\\n\\r\\n', 1)[-1].decode('latin-1').strip())",
            "        if op == 'connect':",
            "            s, st = tunnel(args[1])",
            "            if ' 200 ' not in st: return st",
            "            s.sendall(b'ping')",
            "            return st + ' | ' + s.recv(4).decode()",
            "        if op == 'direct':",
            "            socket.create_connection((args[1], int(args[2])), timeout=10)",
            "            return 'connected'",
            "        if op == 'resolve':",
            "            return 'resolved %s' % socket.getaddrinfo(args[1], 80)[0][4][0]",
            "        if op == 'udp':",
            "            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            "            u.sendto(b'leak', (args[1], int(args[2])))",
            "            return 'sent'",
            "        if op == 'until-refused':",
            "            import time",
            "            for i in range(2400):",
            "                try:",
            "                    s, st = tunnel(args[1])",
            "                    s.close()",
            "                except OSError:",
            "                    st = ''",
            "                if st and ' 200 ' not in st: return st",
            "                time.sleep(0.1)",
            "            return 'never refused'",
            "        if op == 'hold':",
            "            held, out = [], []",
            "            for i in range(int(args[1])):",
            "                s, st = tunnel(args[2])",
            "                held.append(s)",
            "                out.append(st.split(' ')[1])",
            "            return ' '.join(out) + ' | ' + st",
            "    except OSError as e:",
            "        return 'error %s' % type(e).__name__",
            "for line in sys.argv[1:]:",
            "    print(line.split(' ')[0], '->', run(line.split(' ')), flush=True)");

    protected Engine engine;
    protected Workspace ws;
    protected FakeInternet internet;
    protected final BlockingQueue<EgressEvent> events = new LinkedBlockingQueue<>();

    /**
     * A fresh engine with {@code policy} and a proxy configured from {@code proxy} (the test adds its resolver and
     * listener); closed after the test.
     */
    protected abstract Engine createEngine(EgressPolicy policy, EgressProxy.Builder proxy);

    /** The engine's egress, to narrow a workspace or close its gate. */
    protected abstract WorkspaceEgress egressOf(Engine engine);

    @BeforeEach
    void startInternet() throws Exception {
        internet = new FakeInternet();
    }

    @AfterEach
    void closeAll() throws Exception {
        if (engine != null) {
            engine.close();
        }
        internet.close();
    }

    private void start(EgressPolicy policy, EgressProxy.Builder proxy) {
        engine = createEngine(policy, proxy.resolver(FakeInternet.resolver()).listener(events::add));
        ws = engine.manager().createWorkspace("egress", WorkspacePolicy.DEFAULT);
    }

    private void start() {
        start(POLICY, EgressProxy.builder());
    }

    /** Runs the client with one operation per argument; the bound only stops a wedged run. */
    protected RunResult client(String... operations) {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3")
                .args(prepend("-c", CLIENT, operations)).timeout(Duration.ofSeconds(240)).build());
        assertThat(r.stderr()).as("client stderr").isEmpty();
        return r;
    }

    private static List<String> prepend(String a, String b, String[] rest) {
        List<String> all = new java.util.ArrayList<>(List.of(a, b));
        all.addAll(List.of(rest));
        return all;
    }

    private static String line(RunResult r, int i) {
        return r.stdout().lines().toList().get(i);
    }

    @Test
    void should_declare_proxy_egress_control() {
        start();
        assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROXY);
    }

    @Test
    void should_reach_an_allowed_name_and_refuse_another_with_what_is_allowed() {
        start();
        int http = internet.httpPort();
        int echo = internet.echoPort();
        RunResult r = client("get allowed.test " + http + " /x", "get other.test " + http + " /x",
                "connect allowed.test:" + echo, "connect other.test:" + echo);
        assertThat(line(r, 0)).isEqualTo("get -> HTTP/1.1 200 OK | hello allowed.test:" + http + " /x");
        assertThat(line(r, 1)).startsWith("get -> HTTP/1.1 403 egress to other.test:" + http
                + " is not allowed by the policy; allowed: allowed.test:*");
        assertThat(line(r, 2)).isEqualTo("connect -> HTTP/1.1 200 Connection established | ping");
        assertThat(line(r, 3)).startsWith("connect -> HTTP/1.1 403 egress to other.test:" + echo);
        assertThat(internet.requests.get()).isEqualTo(1);
        assertThat(internet.echoConnections.get()).isEqualTo(1);
    }

    @Test
    void should_refuse_allowed_names_that_resolve_to_loopback_or_metadata_and_ip_literals_no_rule_allows() {
        start();
        int echo = internet.echoPort();
        RunResult r = client("connect rebind.test:" + echo, "connect metadata.test:80", "connect 127.0.0.1:" + echo,
                "connect [::1]:" + echo, "connect 169.254.169.254:80", "connect " + FakeInternet.ADDRESS + ":" + echo);
        for (int i = 0; i < 5; i++) {
            assertThat(line(r, i)).as("attempt %d", i).startsWith("connect -> HTTP/1.1 403 ");
        }
        assertThat(line(r, 0)).contains("non-public address 127.0.0.1");
        assertThat(line(r, 1)).contains("non-public address 169.254.169.254");
        assertThat(line(r, 5)).isEqualTo("connect -> HTTP/1.1 200 Connection established | ping");
    }

    @Test
    void should_refuse_an_allowed_name_on_a_port_its_rule_does_not_name() {
        start(EgressPolicy.builder().allow("allowed.test:" + internet.echoPort())
                .allow(FakeInternet.ADDRESS + ":*").build(), EgressProxy.builder());
        RunResult r = client("connect allowed.test:" + internet.echoPort(), "connect allowed.test:" + internet.httpPort());
        assertThat(line(r, 0)).endsWith("| ping");
        assertThat(line(r, 1)).startsWith("connect -> HTTP/1.1 403 ");
    }

    @Test
    void should_have_no_way_out_but_the_proxy_no_dns_and_no_udp() throws Exception {
        start();
        try (DatagramSocket udp = new DatagramSocket(0, InetAddress.getByName("127.0.0.1"))) {
            udp.setSoTimeout(2000);
            RunResult r = client("direct " + FakeInternet.ADDRESS + " " + internet.echoPort(),
                    "direct 127.0.0.1 " + internet.echoPort(), "resolve allowed.test", "resolve localhost.localdomain",
                    "udp 127.0.0.1 " + udp.getLocalPort(), "connect allowed.test:" + internet.echoPort());
            assertThat(line(r, 0)).startsWith("direct -> error");
            assertThat(line(r, 1)).startsWith("direct -> error");
            assertThat(line(r, 2)).startsWith("resolve -> error");
            assertThat(internet.echoConnections.get()).as("only the proxied tunnel reached the host").isEqualTo(1);
            assertThat(line(r, 5)).endsWith("| ping");
            try {
                DatagramPacket p = new DatagramPacket(new byte[16], 16);
                udp.receive(p);
                assertThat(new String(p.getData(), 0, p.getLength())).as("a datagram from the sandbox").isNull();
            } catch (SocketTimeoutException expected) {
                // nothing arrived; the positive control below proves the receiver works
            }
            try (DatagramSocket sender = new DatagramSocket()) {
                sender.send(new DatagramPacket("ok".getBytes(), 2, udp.getLocalSocketAddress()));
            }
            udp.setSoTimeout(0);
            DatagramPacket p = new DatagramPacket(new byte[16], 16);
            udp.receive(p);
            assertThat(new String(p.getData(), 0, p.getLength())).isEqualTo("ok");
        }
    }

    @Test
    void should_refuse_connections_over_the_workspace_limit_while_the_others_work() {
        start(POLICY, EgressProxy.builder().limits(EgressLimits.DEFAULT.withMaxConnections(3)));
        RunResult r = client("hold 4 allowed.test:" + internet.echoPort());
        assertThat(line(r, 0)).startsWith("hold -> 200 200 200 429 | HTTP/1.1 429 ")
                .contains("already has 3 connections open");
    }

    @Test
    void should_ask_the_approver_about_unknown_hosts_once_per_workspace_or_per_connection() {
        AtomicInteger asked = new AtomicInteger();
        start(EgressPolicy.allowing(FakeInternet.ADDRESS + ":*"), EgressProxy.builder()
                .approver(EgressApprover.of(req -> {
                    asked.incrementAndGet();
                    return switch (req.target().host()) {
                        case "allowed.test" -> EgressApproval.ALLOW_FOR_WORKSPACE;
                        case "other.test" -> EgressApproval.ALLOW_ONCE;
                        default -> EgressApproval.DENY;
                    };
                })));
        String echo = ":" + internet.echoPort();
        RunResult r = client("connect allowed.test" + echo, "connect allowed.test" + echo, "connect other.test" + echo,
                "connect other.test" + echo, "connect pypi.test" + echo);
        assertThat(line(r, 0)).endsWith("| ping");
        assertThat(line(r, 1)).endsWith("| ping");
        assertThat(line(r, 2)).endsWith("| ping");
        assertThat(line(r, 3)).endsWith("| ping");
        assertThat(line(r, 4)).startsWith("connect -> HTTP/1.1 403 ").contains("the approver did not allow it");
        assertThat(asked.get()).isEqualTo(4);
    }

    @Test
    void should_deny_when_the_approver_never_answers_while_the_rest_of_the_run_goes_on() {
        CompletableFuture<EgressApproval> never = new CompletableFuture<>();
        start(EgressPolicy.allowing("allowed.test:*", FakeInternet.ADDRESS + ":*"), EgressProxy.builder()
                .approvalTimeout(Duration.ofSeconds(1)).approver(req -> never));
        RunResult r = client("connect other.test:" + internet.echoPort(), "connect allowed.test:" + internet.echoPort());
        assertThat(line(r, 0)).startsWith("connect -> HTTP/1.1 403 ").contains("the approver did not allow it");
        assertThat(line(r, 1)).endsWith("| ping");
        assertThat(never).isCancelled();
    }

    @Test
    void should_audit_every_connection_without_its_contents() throws Exception {
        start();
        client("get allowed.test " + internet.httpPort() + " /secret-path?token=abc",
                "connect other.test:" + internet.echoPort());
        EgressEvent first = events.poll(60, TimeUnit.SECONDS);
        EgressEvent second = events.poll(60, TimeUnit.SECONDS);
        assertThat(List.of(first, second)).extracting(EgressEvent::outcome)
                .containsExactlyInAnyOrder(EgressEvent.Outcome.ALLOWED, EgressEvent.Outcome.DENIED);
        for (EgressEvent e : List.of(first, second)) {
            assertThat(e.workspaceId()).isEqualTo(ws.id());
            assertThat(e.toString()).doesNotContain("secret-path").doesNotContain("token");
        }
    }

    @Test
    void should_fail_closed_with_a_clear_message_while_the_proxy_is_down_and_work_again_after() throws Exception {
        start();
        WorkspaceEgress egress = egressOf(engine);
        String echo = "allowed.test:" + internet.echoPort();
        CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> client("connect " + echo,
                "until-refused " + echo, "direct " + FakeInternet.ADDRESS + " " + internet.echoPort()));
        EgressEvent first = events.poll(240, TimeUnit.SECONDS);
        assertThat(first).as("the first connection's event").isNotNull();
        egress.gate(ws.id()).close(); // the proxy goes down under a running program
        RunResult r = run.get(300, TimeUnit.SECONDS);
        assertThat(line(r, 0)).endsWith("| ping");
        assertThat(line(r, 1)).startsWith("until-refused -> HTTP/1.1 502 the engine's egress proxy is not running");
        assertThat(line(r, 2)).startsWith("direct -> error");
        // The next run opens the gate again (a restart), where the sandbox expects it.
        int before = internet.echoConnections.get();
        RunResult after = client("connect " + echo);
        assertThat(line(after, 0)).endsWith("| ping");
        assertThat(internet.echoConnections.get()).isEqualTo(before + 1);
    }

    @Test
    void should_narrow_a_workspace_without_touching_another() {
        start();
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        egressOf(engine).narrow(ws.id(), EgressPolicy.allowing("rebind.test:*"));
        RunResult narrowed = client("connect allowed.test:" + internet.echoPort());
        assertThat(line(narrowed, 0)).startsWith("connect -> HTTP/1.1 403 ");
        Workspace saved = ws;
        ws = other;
        RunResult untouched = client("connect allowed.test:" + internet.echoPort());
        ws = saved;
        assertThat(line(untouched, 0)).endsWith("| ping");
    }
}
