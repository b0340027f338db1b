package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PodExec} against a scripted API server ({@link LocalExecServer}) whose execs run on this host: output,
 * exit statuses, stdin to its end under v5 and v4, the v4 fallback and its memory, errors of the upgrade.
 */
class PodExecTest {

    private static final Duration T = Duration.ofSeconds(60);

    private final LocalExecServer server = new LocalExecServer();

    @AfterEach
    void close() {
        server.close();
    }

    @Test
    void should_stream_stdout_and_keep_stderr_when_a_command_exits_non_zero() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = server.podExec().run("p", List.of("sh", "-c", "echo out; echo err >&2; exit 3"), null,
                out, T);
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("out\n");
    }

    @Test
    void should_deliver_no_output_after_closed_completed_when_the_socket_is_closed_during_output()
            throws Exception {
        // A command that floods stdout; the socket is closed from this thread while frames are being delivered.
        // Safe outcomes: every delivery began and ended before closed() completed. Positive control: in at least one
        // of the runs, close() was called while a delivery was under way. At least 10 runs, more (up to 100) until the
        // control was seen: how often close() meets a delivery depends on the machine's load.
        int overlapped = 0;
        for (int i = 0; i < 100 && (i < 10 || overlapped == 0); i++) {
            AtomicReference<ExecSocket> socket = new AtomicReference<>();
            AtomicBoolean inside = new AtomicBoolean();
            AtomicInteger frames = new AtomicInteger();
            AtomicInteger late = new AtomicInteger();
            ExecSocket s = server.podExec().open("p", p -> List.of("yes"), false, (stream, b, off, len) -> {
                ExecSocket me = socket.get();
                if (me != null && me.closed().isDone()) {
                    late.incrementAndGet();
                }
                inside.set(true);
                long until = System.nanoTime() + 2_000_000; // a slow sink, so that close() meets a delivery
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                inside.set(false);
                if (me != null && me.closed().isDone()) {
                    late.incrementAndGet(); // the delivery went on after closed() completed
                }
                frames.incrementAndGet();
            }, false);
            socket.set(s);
            while (frames.get() < 5) {
                Thread.sleep(1);
            }
            boolean during = inside.get();
            s.close();
            assertThat(s.closed()).isDone();
            server.processes.get(i).destroyForcibly();
            assertThat(late.get()).as("deliveries after closed() completed").isZero();
            overlapped += during ? 1 : 0;
        }
        assertThat(overlapped).as("runs whose close() met a delivery").isPositive();
    }

    @Test
    void should_end_stdin_with_the_close_message_when_the_server_speaks_v5() {
        PodExec exec = server.podExec();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = exec.run("p", List.of("cat"), in("hello\nworld"), out, T);
        assertThat(r.exitCode()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello\nworld");
        assertThat(exec.protocol()).isEqualTo(ExecSocket.Protocol.V5);
        assertThat(server.commands.get(0)).containsExactly("cat");
    }

    @Test
    void should_fall_back_to_v4_and_remember_it_when_the_server_refuses_v5() {
        server.v4Only = true;
        PodExec exec = server.podExec();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = exec.run("p", List.of("cat"), in("hello"), out, T);
        assertThat(r.exitCode()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThat(exec.protocol()).isEqualTo(ExecSocket.Protocol.V4);
        assertThat(exec.supportsStdinClose()).isFalse();
        // Under v4 the command reads its stdin through the framed decoder, whose end is "0\n".
        assertThat(server.commands.get(0)).endsWith("cat").first().isEqualTo("sh");
        int offers = server.protocolsOffered.size();
        exec.run("p", List.of("true"), null, null, T);
        assertThat(server.protocolsOffered.subList(offers, server.protocolsOffered.size()))
                .containsExactly("v4.channel.k8s.io");
    }

    @Test
    void should_stream_a_large_output_to_its_end_with_flow_control() {
        long[] count = new long[1];
        OutputStream counting = new OutputStream() {
            @Override
            public void write(int b) {
                count[0]++;
            }

            @Override
            public void write(byte[] b, int off, int len) {
                count[0] += len;
            }
        };
        PodCommands.Result r = server.podExec().run("p", List.of("head", "-c", "5000000", "/dev/zero"), null,
                counting, T);
        assertThat(r.exitCode()).isZero();
        assertThat(count[0]).isEqualTo(5_000_000L);
    }

    @Test
    void should_throw_workspace_gone_when_the_pod_does_not_exist() {
        assertThatThrownBy(() -> server.podExec().run("gone", List.of("true"), null, null, T))
                .isInstanceOf(WorkspaceGoneException.class).hasMessageContaining("gone");
    }

    @Test
    void should_name_the_missing_rbac_verb_when_the_exec_is_forbidden() {
        PodExec exec = server.podExec();
        assertThatThrownBy(() -> exec.run("forbidden", List.of("true"), null, null, T))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("'create'").hasMessageContaining("'pods/exec'");
        // A refusal of both protocols is no reason to give up v5.
        assertThat(exec.protocol()).isEqualTo(ExecSocket.Protocol.V5);
    }

    @Test
    void should_report_an_unknown_outcome_when_the_stream_breaks_without_a_status() {
        server.breakNext.set(true);
        assertThatThrownBy(() -> server.podExec().run("p", List.of("sh", "-c", "echo x; exec sleep 1000"), null,
                null, T)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("without an exit status");
    }

    @Test
    void should_report_the_failure_when_the_command_cannot_start() {
        assertThatThrownBy(() -> server.podExec().run("p", List.of("/nonexistent/cmd"), null, null, T))
                .isInstanceOf(ExecSocket.ExecStatusException.class).hasMessageContaining("exec failed");
    }

    @Test
    void should_close_the_stream_and_throw_when_the_command_outlives_its_timeout() throws Exception {
        // Its stdin never ends, so the command cannot end by itself.
        try (PipedOutputStream never = new PipedOutputStream()) {
            PipedInputStream in = new PipedInputStream(never);
            assertThatThrownBy(() -> server.podExec().run("p", List.of("cat"), in, null, Duration.ofMillis(300)))
                    .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("did not end within");
        }
    }

    @Test
    void should_report_which_subreaper_launcher_the_pod_has() {
        assertThat(server.podExec().probeReaper("p")).isEqualTo(PodScripts.Reaper.PERL);
    }

    private static ByteArrayInputStream in(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }
}
