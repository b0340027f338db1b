package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.testing.Requirements;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link PodExecChannel} running the real run wrapper ({@link PodScripts#RUN}) through a scripted API server whose
 * execs run in a {@link FakePod} ({@link LocalExecServer}): output, exit, stdin to its end under v5 and v4, the tree
 * kill (a {@code setsid} daemon included, with and without the subreaper launcher), a signal, a broken stream as an
 * unknown outcome.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PodExecChannelTest {

    /** Starts a setsid double-forked daemon whose pid goes to {@code $1}, then sleeps. */
    private static final String DAEMON = "setsid sh -c 'sleep 1000 & echo $! >\"$1\"' sh \"$1\" &"
            + " while [ ! -s \"$1\" ]; do sleep 0.01; done; sleep 1000";

    private FakePod pod;
    private LocalExecServer server;
    private final String dir = PodLayout.ROOT;
    private final String control = PodLayout.CONTROL + "/" + java.util.UUID.randomUUID();
    private final Out out = new Out();

    @BeforeEach
    void startPod() {
        Requirements.require(FakePod.available(), "root with bwrap, nsenter and setpriv (the fake pod)");
        pod = FakePod.start("channel");
        server = new LocalExecServer(pod);
    }

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
        if (pod != null) {
            pod.close();
        }
    }

    /** A path of the pod, seen from this host. */
    private Path host(String podPath) {
        return Path.of("/proc", Long.toString(pod.initPid()), "root", podPath.substring(1));
    }

    @Test
    void should_give_the_program_stdin_to_its_end_when_the_server_speaks_v5() throws Exception {
        assertCatEchoes();
        assertThat(server.commands.get(0)).contains(PodScripts.STDIN_RAW);
    }

    @Test
    void should_give_the_program_stdin_to_its_end_with_framed_input_when_the_server_speaks_only_v4()
            throws Exception {
        server.v4Only = true;
        assertCatEchoes();
        assertThat(server.commands.get(0)).contains(PodScripts.STDIN_FRAMED);
    }

    private void assertCatEchoes() throws Exception {
        ChannelProcess p = start(PodScripts.Reaper.PYTHON, "cat");
        p.stdin().write("hello\n".getBytes(StandardCharsets.UTF_8));
        p.stdin().write("world".getBytes(StandardCharsets.UTF_8));
        p.stdin().close();
        assertThat(p.exit().get()).isZero();
        p.outputEnd().get();
        assertThat(out.stdout()).isEqualTo("hello\nworld");
    }

    @Test
    void should_report_the_exit_status_and_stderr_when_the_program_fails() throws Exception {
        ChannelProcess p = start(PodScripts.Reaper.PYTHON, "sh", "-c", "echo oops >&2; exit 7");
        p.stdin().close();
        assertThat(p.exit().get()).isEqualTo(7);
        p.outputEnd().get();
        assertThat(out.stderr()).isEqualTo("oops\n");
    }

    @Test
    void should_kill_the_program_and_its_setsid_daemon_when_the_tree_is_killed() throws Exception {
        String daemon = dir + "/daemon";
        ChannelProcess p = start(PodScripts.Reaper.PYTHON, "sh", "-c", DAEMON, "prog", daemon);
        long d = awaitPid(daemon);
        assertThat(Files.exists(host(control))).as("positive control: the run's control folder").isTrue();
        p.killTree();
        assertThat(p.exit().get()).isEqualTo(137);
        while (alive(d)) {
            Thread.sleep(10); // SIGKILL was sent; the kernel ends it (bounded by the class timeout)
        }
        assertThat(channel.failure()).isNull();
        // The kill returned after its script removed the killed wrapper's folder: no mark is left behind.
        assertThat(Files.exists(host(control))).isFalse();
    }

    @Test
    void should_kill_a_setsid_daemon_that_left_the_tree_when_the_pod_has_no_subreaper_launcher() throws Exception {
        String daemon = dir + "/daemon";
        ChannelProcess p = start(PodScripts.Reaper.NONE, "sh", "-c", DAEMON, "prog", daemon);
        long d = awaitPid(daemon);
        // Positive control: without the launcher the orphan left the run's tree for PID 1.
        assertThat(ppid(d)).isEqualTo(1);
        p.killTree();
        assertThat(p.exit().get()).isEqualTo(137);
        while (alive(d)) {
            Thread.sleep(10); // SIGKILL was sent to the orphans under PID 1 (bounded by the class timeout)
        }
    }

    @Test
    void should_signal_the_program_not_its_wrapper() throws Exception {
        ChannelProcess p = start(PodScripts.Reaper.PYTHON, "sh", "-c",
                "trap 'echo term; exit 5' TERM; echo ready; while :; do sleep 1; done");
        while (!out.stdout().contains("ready") || !Files.exists(host(control + "/pid"))) {
            Thread.sleep(10);
        }
        p.signal(ProgramSignal.TERMINATE);
        assertThat(p.exit().get()).isEqualTo(5);
        p.outputEnd().get();
        assertThat(out.stdout()).isEqualTo("ready\nterm\n");
    }

    @Test
    void should_report_an_unknown_outcome_and_kill_the_tree_when_the_stream_breaks() throws Exception {
        server.breakNext.set(true);
        ChannelProcess p = start(PodScripts.Reaper.PYTHON, "sh", "-c", "echo started; sleep 1000");
        assertThat(p.exit().get()).isEqualTo(-1);
        p.outputEnd().get();
        assertThat(out.stdout()).isEqualTo("started\n");
        assertThat(channel.failure()).isNotNull().hasMessageContaining("without an exit status");
        // The lost run's tree is killed by a second exec: its wrapper ends.
        assertThat(server.processes.get(0).waitFor()).isEqualTo(137);
    }

    private PodExecChannel channel;

    private ChannelProcess start(PodScripts.Reaper reaper, String... program) {
        List<String> args = new ArrayList<>(List.of(control, dir + "/.run",
                PodScripts.STDIN_RAW, "/", "- - -", "0", "-", "-", "-", "-", "-", "env", "-i",
                "PATH=/usr/local/bin:/usr/bin:/bin"));
        args.addAll(List.of(program));
        channel = new PodExecChannel(server.podExec(), "p", control, null);
        return channel.start(new ProgramLaunch(PodScripts.runArgv(reaper, args), Map.of(), "/", null,
                Duration.ofSeconds(60), 1 << 20, null), out);
    }

    private long awaitPid(String podPath) throws Exception {
        Path file = host(podPath);
        while (true) {
            if (Files.exists(file)) {
                String s = Files.readString(file).trim();
                if (!s.isEmpty()) {
                    return Long.parseLong(s);
                }
            }
            Thread.sleep(10);
        }
    }

    /** The parent of a process of the pod, or -1 when it is gone. */
    private long ppid(long pid) throws Exception {
        for (String line : Files.readAllLines(host("/proc/" + pid + "/status"))) {
            if (line.startsWith("PPid:")) {
                return Long.parseLong(line.substring(5).trim());
            }
        }
        return -1;
    }

    /** Whether a process of the pod runs (not gone, not a zombie). */
    private boolean alive(long pid) throws Exception {
        Path status = host("/proc/" + pid + "/status");
        if (!Files.exists(status)) {
            return false;
        }
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("State:")) {
                    return !line.contains("Z");
                }
            }
        } catch (java.io.IOException e) {
            return false;
        }
        return false;
    }

    private static final class Out implements OutputSink {
        private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

        @Override
        public synchronized void write(StdStream stream, byte[] b, int off, int len) {
            (stream == StdStream.STDOUT ? stdout : stderr).write(b, off, len);
        }

        synchronized String stdout() {
            return stdout.toString(StandardCharsets.UTF_8);
        }

        synchronized String stderr() {
            return stderr.toString(StandardCharsets.UTF_8);
        }
    }
}
