package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.FakeKernel.b;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/** The client's protocol rules against a scripted kernel: routing, verification, stdin, heartbeat, budgets, death. */
class JupyterKernelClientTest {

    private static final long WAIT = TimeUnit.SECONDS.toNanos(30);

    private final ObjectMapper json = new ObjectMapper();
    private final ZContext zmq = new ZContext(1);
    private final AtomicInteger heartbeatDeaths = new AtomicInteger();
    private FakeKernel kernel;
    private KernelClient client;

    @BeforeEach
    void setUp() {
        kernel = new FakeKernel();
        client = new KernelClient(zmq, kernel.info, "fake", json, Duration.ofMillis(100), Duration.ofSeconds(5),
                heartbeatDeaths::incrementAndGet);
        client.start();
    }

    @AfterEach
    void tearDown() {
        client.close();
        kernel.close();
        zmq.close();
    }

    /** Sends a request, lets the kernel receive it, and publishes {@code status: busy} until the SUB has joined. */
    private KernelRequest requestSeenByKernel(Budget budget, List<FakeKernel.Received> received) throws Exception {
        KernelRequest r = client.request(Channel.SHELL, "execute_request", json.createObjectNode().put("code", "x"), budget,
                null);
        FakeKernel.Received req = kernel.recvShell();
        received.add(req);
        assertThat(req.msgId()).isEqualTo(r.msgId());
        // A SUB misses what is published before its subscription arrived: repeat until one gets through.
        for (int i = 0; i < 600; i++) {
            kernel.publish(req.header(), "status", "{\"execution_state\":\"busy\"}");
            JupyterMessage m = r.poll(TimeUnit.MILLISECONDS.toNanos(50));
            if (m != null) {
                assertThat(m.msgType()).isEqualTo("status");
                drainUntilMarker(r, req.header());
                return r;
            }
        }
        throw new AssertionError("no IOPub message reached the client");
    }

    /**
     * Copies of the subscription probe sent before the first one arrived may still be on their way (how many depends
     * on the machine's load): once subscribed, IOPub keeps its order, so everything before a marker published now is
     * such a copy, and the tests start from an empty queue.
     */
    private void drainUntilMarker(KernelRequest r, byte[] parent) throws InterruptedException {
        kernel.publish(parent, "status", "{\"execution_state\":\"subscribed\"}");
        for (JupyterMessage m; (m = r.poll(WAIT)) != null; ) {
            assertThat(m.msgType()).isEqualTo("status");
            if (m.content(json).path("execution_state").asText().equals("subscribed")) {
                return;
            }
        }
        throw new AssertionError("the subscription marker did not reach the client");
    }

    @Test
    void should_route_by_parent_and_ignore_messages_of_other_requests() throws Exception {
        List<FakeKernel.Received> received = new ArrayList<>();
        KernelRequest r = requestSeenByKernel(null, received);
        FakeKernel.Received req = received.get(0);

        kernel.publish(kernel.headerFor("someone-else"), "stream", "{\"name\":\"stdout\",\"text\":\"not mine\"}");
        kernel.publish(req.header(), "stream", "{\"name\":\"stdout\",\"text\":\"mine\"}");
        kernel.reply(req, "execute_reply", "{\"status\":\"ok\"}");
        kernel.publish(req.header(), "status", "{\"execution_state\":\"idle\"}");

        List<String> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            JupyterMessage m = r.poll(WAIT);
            got.add(m.channel() + " " + m.msgType() + " " + m.content(json).path("text").asText(""));
        }
        assertThat(got).containsExactlyInAnyOrder("IOPUB stream mine", "SHELL execute_reply ", "IOPUB status ");
        assertThat(r.poll(TimeUnit.MILLISECONDS.toNanos(200))).isNull();
        r.close();
    }

    @Test
    void should_drop_forged_and_malformed_messages_and_count_them() throws Exception {
        List<FakeKernel.Received> received = new ArrayList<>();
        KernelRequest r = requestSeenByKernel(null, received);
        byte[] parent = received.get(0).header();

        kernel.publishForged(parent, "stream", "{\"name\":\"stdout\",\"text\":\"FORGED\"}");
        kernel.publishRaw(List.of(b("no delimiter"), parent));
        kernel.publish(parent, "stream", "{\"name\":\"stdout\",\"text\":\"GENUINE\"}");

        JupyterMessage m = r.poll(WAIT);
        assertThat(m.content(json).path("text").asText()).isEqualTo("GENUINE");
        assertThat(client.droppedMessages()).isEqualTo(2);
        r.close();
    }

    @Test
    void should_share_the_shell_identity_with_stdin_and_answer_an_unasked_input_request() throws Exception {
        KernelRequest r = client.request(Channel.SHELL, "execute_request", json.createObjectNode(), null, null);
        FakeKernel.Received req = kernel.recvShell();

        kernel.askInput(req); // addressed to the shell DEALER's identity, on the stdin ROUTER
        FakeKernel.Received answer = kernel.recvStdin();

        assertThat(answer.identity()).isEqualTo(req.identity());
        assertThat(answer.msgType()).isEqualTo("input_reply");
        assertThat(answer.content().path("value").asText("missing")).isEmpty();
        JupyterMessage routed = r.poll(WAIT);
        assertThat(routed.channel()).isEqualTo(Channel.STDIN);
        assertThat(routed.msgType()).isEqualTo("input_request");
        r.close();
    }

    @Test
    void should_send_control_requests_on_the_control_channel() {
        KernelRequest r = client.request(Channel.CONTROL, "interrupt_request", json.createObjectNode(), null, null);

        FakeKernel.Received req = kernel.recvControl();

        assertThat(req.msgType()).isEqualTo("interrupt_request");
        assertThat(req.msgId()).isEqualTo(r.msgId());
        r.close();
    }

    @Test
    void should_declare_the_kernel_dead_when_heartbeats_stop_and_wake_the_waiting_request() throws Exception {
        List<FakeKernel.Received> received = new ArrayList<>();
        KernelRequest r = requestSeenByKernel(null, received);
        client.enableHeartbeat();
        kernel.reply(received.get(0), "execute_reply", "{\"status\":\"ok\"}");
        assertThat(r.poll(WAIT).msgType()).as("alive while the heartbeat is echoed").isEqualTo("execute_reply");

        kernel.echoHeartbeats(false);

        assertThat(r.poll(WAIT).isDeath()).isTrue();
        assertThat(client.deathReason()).startsWith("the kernel stopped answering heartbeats for ");
        assertThat(heartbeatDeaths.get()).isEqualTo(1);
        r.close();
    }

    @Test
    void should_drop_stream_output_past_the_budget_but_keep_the_rest() throws Exception {
        List<FakeKernel.Received> received = new ArrayList<>();
        KernelRequest r = requestSeenByKernel(new Budget(100, 1, 1 << 20), received);
        byte[] parent = received.get(0).header();

        for (int i = 0; i < 10; i++) {
            kernel.publish(parent, "stream", "{\"name\":\"stdout\",\"text\":\"" + "x".repeat(60) + "\"}");
        }
        kernel.publish(parent, "display_data", "{\"data\":{\"text/plain\":\"1\"}}");
        kernel.publish(parent, "display_data", "{\"data\":{\"text/plain\":\"2\"}}");
        kernel.publish(parent, "status", "{\"execution_state\":\"idle\"}");
        // The second display is dropped only after everything before it was routed (one socket keeps the order):
        // from then on, what waits in the queue is settled.
        long deadline = System.nanoTime() + WAIT;
        while (r.budget().droppedRich() < 1 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }

        List<String> got = new ArrayList<>();
        for (JupyterMessage m; !(m = r.poll(WAIT)).msgType().equals("status"); ) {
            got.add(m.msgType());
        }
        assertThat(got).containsExactly("stream", "stream", "display_data");
        assertThat(r.budget().droppedStreamBytes()).isGreaterThan(0);
        assertThat(r.budget().droppedRich()).isEqualTo(1);

        // What the consumer took no longer counts: later output of a long cell (its last lines) gets through.
        kernel.publish(parent, "stream", "{\"name\":\"stdout\",\"text\":\"FINAL\"}");
        JupyterMessage last = r.poll(WAIT);
        assertThat(last).isNotNull();
        assertThat(last.msgType()).isEqualTo("stream");
        r.close();
    }

    @Test
    void should_wake_every_waiting_request_when_marked_dead_and_answer_later_ones_at_once() throws Exception {
        KernelRequest a = client.request(Channel.SHELL, "execute_request", json.createObjectNode(), null, null);
        KernelRequest b = client.request(Channel.CONTROL, "interrupt_request", json.createObjectNode(), null, null);

        client.markDead("the kernel process exited with status 1");
        KernelRequest late = client.request(Channel.SHELL, "kernel_info_request", json.createObjectNode(), null, null);

        assertThat(a.poll(WAIT).isDeath()).isTrue();
        assertThat(b.poll(WAIT).isDeath()).isTrue();
        assertThat(late.poll(WAIT).isDeath()).isTrue();
        assertThat(client.deathReason()).isEqualTo("the kernel process exited with status 1");
        client.markDead("a second reason");
        assertThat(client.deathReason()).as("the first reason is kept").isEqualTo("the kernel process exited with status 1");
    }

    @Test
    void should_not_spin_while_messages_trickle_in() throws Exception {
        List<FakeKernel.Received> received = new ArrayList<>();
        KernelRequest r = requestSeenByKernel(null, received);
        long before = client.readerRounds()[0];

        // jeromq leaves a socket's ZMQ_FD readable for a while after traffic: a reader that waits on it naively
        // turns thousands of rounds for these 40 messages.
        for (int i = 0; i < 40; i++) {
            kernel.publish(received.get(0).header(), "stream", "{\"name\":\"stdout\",\"text\":\"" + i + "\"}");
            TimeUnit.MILLISECONDS.sleep(1);
        }
        for (int i = 0; i < 40; i++) {
            assertThat(r.poll(WAIT).msgType()).isEqualTo("stream");
        }

        // About one round per message here; without the back-off, hundreds more.
        assertThat(client.readerRounds()[0] - before).as("reader rounds for 40 messages").isLessThan(200);
        r.close();
    }

    @Test
    void should_not_be_disturbed_by_an_interrupted_caller() throws Exception {
        Thread.currentThread().interrupt();
        KernelRequest r;
        try {
            r = client.request(Channel.SHELL, "execute_request", json.createObjectNode(), null, null);
        } finally {
            assertThat(Thread.interrupted()).as("the flag is left alone").isTrue();
        }

        FakeKernel.Received req = kernel.recvShell();
        kernel.reply(req, "execute_reply", "{\"status\":\"ok\"}");

        assertThat(r.poll(WAIT).msgType()).isEqualTo("execute_reply");
        assertThat(client.deathReason()).isNull();
    }
}
