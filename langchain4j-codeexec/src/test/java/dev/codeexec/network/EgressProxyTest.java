package dev.codeexec.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proxy on a loopback gate, against servers standing in for the internet ({@link FakeInternet}, on 127.0.0.2,
 * which the policy allows by address as a deployment allows an internal range). Every refusal is paired with the
 * allowed connection it differs from.
 */
class EgressProxyTest {

    private FakeInternet internet;
    private final BlockingQueue<EgressEvent> events = new LinkedBlockingQueue<>();
    private EgressProxy proxy;

    private static EgressPolicy policy() {
        return EgressPolicy.builder().allow("allowed.test:*").allow("rebind.test:*").allow("metadata.test:*")
                .allow(FakeInternet.ADDRESS + ":*").build();
    }

    @BeforeEach
    void start() throws Exception {
        internet = new FakeInternet();
    }

    @AfterEach
    void stop() throws IOException {
        if (proxy != null) {
            proxy.close();
        }
        internet.close();
    }

    private EgressGate gate(EgressProxy.Builder b) throws IOException {
        proxy = b.resolver(FakeInternet.resolver()).listener(events::add).build();
        return proxy.openLoopback("ws-1", policy());
    }

    private EgressGate gate() throws IOException {
        return gate(EgressProxy.builder());
    }

    private EgressEvent event() throws InterruptedException {
        EgressEvent e = events.poll(60, TimeUnit.SECONDS);
        assertThat(e).as("an egress event").isNotNull();
        return e;
    }

    @Test
    void a_plain_http_request_to_an_allowed_name_is_forwarded_and_audited() throws Exception {
        EgressGate gate = gate();
        HttpClient client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", gate.port()))).build();
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                URI.create("http://allowed.test:" + internet.httpPort() + "/simple/?q=1")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("hello allowed.test:" + internet.httpPort() + " /simple/?q=1");
        EgressEvent e = event();
        assertThat(e.outcome()).isEqualTo(EgressEvent.Outcome.ALLOWED);
        assertThat(e.target().host()).isEqualTo("allowed.test");
        assertThat(e.target().kind()).isEqualTo(EgressTarget.Kind.HTTP);
        assertThat(e.rule()).isEqualTo("allow allowed.test:*");
        assertThat(e.address()).isEqualTo(FakeInternet.ADDRESS);
        assertThat(e.bytesUp()).isPositive();
        assertThat(e.bytesDown()).isPositive();
        assertThat(e.workspaceId()).isEqualTo("ws-1");
    }

    @Test
    void a_tunnel_to_an_allowed_name_carries_bytes_and_a_denied_name_gets_a_message_a_model_can_act_on()
            throws Exception {
        EgressGate gate = gate();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            c.send("ping");
            assertThat(new String(c.read(4), StandardCharsets.US_ASCII)).isEqualTo("ping");
        }
        assertThat(event().outcome()).isEqualTo(EgressEvent.Outcome.ALLOWED);
        int before = internet.echoConnections.get();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            String head = c.connect("other.test:" + internet.echoPort());
            assertThat(head).startsWith("HTTP/1.1 403 egress to other.test:" + internet.echoPort()
                    + " is not allowed by the policy; allowed: allowed.test:*, rebind.test:*");
            assertThat(head).contains("X-Proxy-Error: blocked-by-policy");
        }
        EgressEvent denied = event();
        assertThat(denied.outcome()).isEqualTo(EgressEvent.Outcome.DENIED);
        assertThat(denied.address()).isEmpty();
        assertThat(internet.echoConnections.get()).isEqualTo(before);
    }

    @Test
    void a_host_that_speaks_first_is_heard_before_the_program_sends_anything() throws Exception {
        EgressGate gate = gate();
        try (java.net.ServerSocket banner = new java.net.ServerSocket(0, 4,
                java.net.InetAddress.getByName(FakeInternet.ADDRESS))) {
            Thread t = new Thread(() -> {
                try (java.net.Socket s = banner.accept()) {
                    s.getOutputStream().write("220 ready\r\n".getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().read(); // until the client goes
                } catch (IOException e) {
                    // the test ended
                }
            });
            t.setDaemon(true);
            t.start();
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect("allowed.test:" + banner.getLocalPort())).startsWith("HTTP/1.1 200 ");
                assertThat(new String(c.read(11), StandardCharsets.US_ASCII)).isEqualTo("220 ready\r\n");
            }
        }
    }

    @Test
    void allowed_names_resolving_to_loopback_or_metadata_addresses_are_refused() throws Exception {
        EgressGate gate = gate();
        for (String host : new String[] {"rebind.test", "metadata.test"}) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect(host + ":" + internet.echoPort())).startsWith("HTTP/1.1 403 ")
                        .contains("non-public address");
            }
            EgressEvent e = event();
            assertThat(e.outcome()).isEqualTo(EgressEvent.Outcome.DENIED);
            assertThat(e.target().host()).isEqualTo(host);
        }
    }

    @Test
    void ip_literals_are_decided_by_address_rules_only() throws Exception {
        EgressGate gate = gate();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect(FakeInternet.ADDRESS + ":" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
        }
        for (String literal : new String[] {"127.0.0.3", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254"}) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect(literal + ":" + internet.echoPort())).as(literal).startsWith("HTTP/1.1 403 ");
            }
        }
    }

    @Test
    void a_tls_hello_for_another_name_than_the_tunnel_is_refused_before_it_reaches_the_host() throws Exception {
        EgressGate gate = gate();
        byte[] good = TlsHellos.clientHello("allowed.test");
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            c.send(good);
            assertThat(c.read(good.length)).isEqualTo(good); // echoed: it reached the host
        }
        assertThat(event().outcome()).isEqualTo(EgressEvent.Outcome.ALLOWED);
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            c.send(TlsHellos.clientHello("other.test"));
            assertThat(c.ended()).as("ended, nothing echoed").isTrue();
        }
        EgressEvent e = event();
        assertThat(e.outcome()).isEqualTo(EgressEvent.Outcome.DENIED);
        assertThat(e.reason()).contains("TLS server name 'other.test'").contains("domain fronting");
        assertThat(e.bytesUp()).isZero();
    }

    @Test
    void socks5_connects_allowed_names_and_refuses_others_and_udp() throws Exception {
        EgressGate gate = gate();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send(new byte[] {5, 1, 0});
            assertThat(c.read(2)).containsExactly(5, 0);
            c.send(socksConnect("allowed.test", internet.echoPort()));
            assertThat(c.read(10)[1]).isEqualTo((byte) 0);
            c.send("socks");
            assertThat(new String(c.read(5), StandardCharsets.US_ASCII)).isEqualTo("socks");
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send(new byte[] {5, 1, 0});
            c.read(2);
            c.send(socksConnect("other.test", internet.echoPort()));
            assertThat(c.read(10)[1]).isEqualTo((byte) ProxyRequest.SOCKS_NOT_ALLOWED);
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send(new byte[] {5, 1, 0});
            c.read(2);
            c.send(new byte[] {5, 3, 0, 1, 0, 0, 0, 0, 0, 0}); // UDP ASSOCIATE
            assertThat(c.read(10)[1]).isEqualTo((byte) ProxyRequest.SOCKS_COMMAND_NOT_SUPPORTED);
        }
    }

    private static byte[] socksConnect(String host, int port) {
        byte[] name = host.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[7 + name.length];
        out[0] = 5;
        out[1] = 1;
        out[3] = 3;
        out[4] = (byte) name.length;
        System.arraycopy(name, 0, out, 5, name.length);
        out[5 + name.length] = (byte) (port >> 8);
        out[6 + name.length] = (byte) port;
        return out;
    }

    @Test
    void requests_that_could_smuggle_or_front_are_refused_before_a_connection() throws Exception {
        EgressGate gate = gate();
        String url = "http://allowed.test:" + internet.httpPort() + "/";
        String[] bad = {
            "GET " + url + " HTTP/1.1\r\nHost: other.test\r\n\r\n",
            "POST " + url + " HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST " + url + " HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "GET " + url + " HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
            "GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
            "GET https://allowed.test/ HTTP/1.1\r\n\r\n",
            "GET " + url + " HTTP/1.1\nHost: allowed.test\r\n\r\n",
        };
        for (String request : bad) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.send(request).head()).as(request).startsWith("HTTP/1.1 400 ");
            }
        }
        assertThat(internet.requests.get()).isZero();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send("GET " + url + " HTTP/1.1\r\nHost: allowed.test:" + internet.httpPort() + "\r\n\r\n");
            assertThat(c.rest()).startsWith("HTTP/1.1 200 ").endsWith("hello allowed.test:" + internet.httpPort()
                    + " /");
        }
    }

    @Test
    void a_connection_carries_one_exchange_and_a_second_request_on_it_never_reaches_a_host() throws Exception {
        EgressGate gate = gate();
        String allowed = "allowed.test:" + internet.httpPort();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            // A keep-alive client, and a second request for a denied host on the same connection.
            c.send("GET http://" + allowed + "/one HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n"
                    + "GET http://other.test:" + internet.httpPort() + "/two HTTP/1.1\r\nHost: other.test:"
                    + internet.httpPort() + "\r\n\r\n");
            String all = c.rest();
            assertThat(all).startsWith("HTTP/1.1 200 ").contains("Connection: close")
                    .endsWith("hello " + allowed + " /one").doesNotContain("/two");
        }
        assertThat(internet.requests.get()).isEqualTo(1);
    }

    @Test
    void request_and_response_bodies_keep_their_framing() throws Exception {
        EgressGate gate = gate();
        String allowed = "allowed.test:" + internet.httpPort();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send("POST http://" + allowed + "/upload HTTP/1.1\r\nHost: " + allowed + "\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
            assertThat(c.rest()).startsWith("HTTP/1.1 200 ").endsWith("got 11 bytes");
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send("POST http://" + allowed + "/upload HTTP/1.1\r\nHost: " + allowed + "\r\n"
                    + "Content-Length: 3\r\n\r\nabc");
            assertThat(c.rest()).endsWith("got 3 bytes");
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send("GET http://" + allowed + "/chunked HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n");
            String all = c.rest();
            assertThat(all).contains("Transfer-encoding: chunked").contains("part0;").contains("part2;")
                    .endsWith("0\r\n\r\n");
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            c.send("HEAD http://" + allowed + "/ HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n");
            assertThat(c.rest()).startsWith("HTTP/1.1 200 ").endsWith("\r\n\r\n");
        }
    }

    @Test
    void an_approver_is_asked_about_hosts_no_rule_covers_once_per_workspace_or_per_connection() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        EgressPolicy narrow = EgressPolicy.builder().allow(FakeInternet.ADDRESS + ":*").build();
        proxy = EgressProxy.builder().resolver(FakeInternet.resolver()).listener(events::add)
                .approver(EgressApprover.of(r -> {
                    asked.incrementAndGet();
                    return r.target().host().equals("allowed.test") ? EgressApproval.ALLOW_FOR_WORKSPACE
                            : r.target().host().equals("other.test") ? EgressApproval.ALLOW_ONCE
                            : EgressApproval.DENY;
                })).build();
        EgressGate gate = proxy.openLoopback("ws-2", narrow);
        for (int i = 0; i < 2; i++) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            }
            assertThat(event().outcome()).isEqualTo(EgressEvent.Outcome.APPROVED);
        }
        assertThat(asked.get()).isEqualTo(1);
        for (int i = 0; i < 2; i++) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect("other.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            }
            assertThat(event().outcome()).isEqualTo(EgressEvent.Outcome.APPROVED);
        }
        assertThat(asked.get()).isEqualTo(3);
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("rebind.test:" + internet.echoPort())).startsWith("HTTP/1.1 403 ");
        }
        assertThat(event().outcome()).isEqualTo(EgressEvent.Outcome.DENIED);
    }

    @Test
    void an_approved_host_that_resolves_to_a_non_public_address_stays_refused() throws Exception {
        proxy = EgressProxy.builder().resolver(FakeInternet.resolver()).listener(events::add)
                .approver(EgressApprover.of(r -> EgressApproval.ALLOW_ONCE)).build();
        EgressGate gate = proxy.openLoopback("ws-3", EgressPolicy.denyAll());
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("metadata.test:80")).startsWith("HTTP/1.1 403 ").contains("non-public");
        }
    }

    @Test
    void an_approver_that_never_answers_or_fails_denies_within_the_approval_timeout() throws Exception {
        CompletableFuture<EgressApproval> never = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        proxy = EgressProxy.builder().resolver(FakeInternet.resolver()).listener(events::add)
                .approvalTimeout(Duration.ofMillis(200))
                .approver(r -> calls.incrementAndGet() == 1 ? never : CompletableFuture.failedFuture(
                        new IllegalStateException("approver down"))).build();
        EgressGate gate = proxy.openLoopback("ws-4", EgressPolicy.allowing(FakeInternet.ADDRESS + ":*"));
        for (int i = 0; i < 2; i++) {
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 403 ")
                        .contains("the approver did not allow it");
            }
        }
        assertThat(never).isCancelled();
    }

    @Test
    void a_workspace_cannot_hold_more_connections_than_its_limit() throws Exception {
        EgressGate gate = gate(EgressProxy.builder().limits(EgressLimits.DEFAULT.withMaxConnections(2)));
        try (ProxyClient a = new ProxyClient(gate.port()); ProxyClient b = new ProxyClient(gate.port())) {
            assertThat(a.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            assertThat(b.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            try (ProxyClient c = new ProxyClient(gate.port())) {
                assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 429 ")
                        .contains("already has 2 connections open");
            }
            a.send("x");
            assertThat(a.read(1)).containsExactly('x');
        }
    }

    @Test
    void the_byte_budget_ends_a_connection_and_refuses_the_next() throws Exception {
        EgressGate gate = gate(EgressProxy.builder().limits(EgressLimits.DEFAULT.withMaxBytes(1000)));
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            c.send(new byte[600]);
            c.read(600);
            c.send(new byte[600]);
            assertThat(c.drain()).isLessThan(600);
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 429 ")
                    .contains("egress budget");
        }
    }

    @Test
    void closing_the_gate_ends_its_connections_and_refuses_new_ones() throws Exception {
        EgressGate gate = gate();
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
            gate.close();
            assertThat(c.ended()).isTrue();
        }
        assertThat(gate.isClosed()).isTrue();
        assertThat(proxy.gates()).doesNotContain(gate);
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).doesNotContain("200");
        } catch (java.net.SocketException expected) {
            // nothing listens any more: refused, or reset by the closed listener's backlog
        }
    }

    @Test
    void connections_over_the_limit_take_no_thread_and_a_silent_program_is_ended() throws Exception {
        EgressGate gate = gate(EgressProxy.builder().limits(EgressLimits.DEFAULT.withMaxConnections(2)));
        int before = Thread.activeCount();
        java.util.List<ProxyClient> silent = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                silent.add(new ProxyClient(gate.port())); // never sends a request
            }
            // The 48 over the limit were answered at once on the accepting thread.
            int refused = 0;
            for (ProxyClient c : silent.subList(2, silent.size())) {
                refused += c.head().startsWith("HTTP/1.1 429 ") ? 1 : 0;
            }
            assertThat(refused).isEqualTo(48);
            assertThat(Thread.activeCount() - before).as("threads for 50 silent connections").isLessThan(20);
        } finally {
            for (ProxyClient c : silent) {
                c.close();
            }
        }
    }

    @Test
    void an_approval_given_before_a_narrowing_does_not_survive_it() throws Exception {
        proxy = EgressProxy.builder().resolver(FakeInternet.resolver()).listener(events::add)
                .approver(EgressApprover.of(r -> EgressApproval.ALLOW_FOR_WORKSPACE)).build();
        EgressGate gate = proxy.openLoopback("ws-5", EgressPolicy.allowing(FakeInternet.ADDRESS + ":*"));
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 200 ");
        }
        gate.narrow(EgressPolicy.allowing("pypi.test:*"));
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 403 ")
                    .contains("narrowed policy");
        }
    }

    @Test
    void a_narrowed_gate_refuses_what_its_narrower_does_not_allow() throws Exception {
        EgressGate gate = gate();
        gate.narrow(EgressPolicy.allowing("other.test:*"));
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("allowed.test:" + internet.echoPort())).startsWith("HTTP/1.1 403 ");
        }
        try (ProxyClient c = new ProxyClient(gate.port())) {
            assertThat(c.connect("other.test:" + internet.echoPort())).startsWith("HTTP/1.1 403 ");
        }
    }
}
