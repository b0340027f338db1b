package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.testing.Requirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link PodExec} and {@link PodExecChannel} against the fake cluster ({@link FakeCluster}: the mock API server with
 * a kubelet whose pods run on this host), over protocol v5 and over v4 alone: output, exit statuses, stdin to its end,
 * the tree kill of a run with a {@code setsid} daemon, a broken stream as an unknown outcome, a pod that is gone.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PodExecFakeClusterTest {

    private static final Duration T = Duration.ofSeconds(60);

    private FakeCluster cluster;
    private PodExec exec;

    private void start(boolean v4Only) {
        Requirements.require(FakeCluster.available(), "root with bwrap, nsenter and setpriv (the fake cluster)");
        cluster = v4Only ? FakeCluster.startV4Only() : FakeCluster.start();
        try {
            cluster.client().pods().resource(FakeClusterTest.pod("p1", "codeexec-python:bookworm")).create();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            if (e.getCode() != 409) { // a create retried by the client after a slow first answer
                throw e;
            }
        }
        cluster.client().pods().withName("p1").waitUntilReady(60, TimeUnit.SECONDS);
        exec = new PodExec(cluster.client(), FakeCluster.NAMESPACE);
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void should_run_commands_with_stdin_to_its_end_over_v5() {
        start(false);
        assertCommands();
        assertThat(exec.protocol()).isEqualTo(ExecSocket.Protocol.V5);
    }

    @Test
    void should_run_commands_with_stdin_to_its_end_over_v4() {
        start(true);
        assertCommands();
        assertThat(exec.protocol()).isEqualTo(ExecSocket.Protocol.V4);
    }

    private void assertCommands() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = exec.run("p1", List.of("sh", "-c", "cat; echo err >&2; exit 4"),
                new ByteArrayInputStream("in\n".getBytes(StandardCharsets.UTF_8)), out, T);
        assertThat(r.exitCode()).isEqualTo(4);
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("in\n");
        assertThat(exec.probeReaper("p1")).isEqualTo(PodScripts.Reaper.PERL);

        // Several messages of stdin, each with its channel byte at the 64 KiB frame limit of the mock server's
        // Vert.x: one byte more and the server closes the stream with no exit status (a write of a file over 64 KiB).
        byte[] big = new byte[3 * ExecSocket.MAX_FRAME + 5];
        ByteArrayOutputStream counted = new ByteArrayOutputStream();
        PodCommands.Result all = exec.run("p1", List.of("wc", "-c"), new ByteArrayInputStream(big), counted, T);
        assertThat(all.exitCode()).isZero();
        assertThat(counted.toString(StandardCharsets.UTF_8).trim()).isEqualTo(Integer.toString(big.length));
    }

    @Test
    void should_run_a_program_with_stdin_to_its_end_through_the_wrapper_over_v5() throws Exception {
        start(false);
        assertWrapperRun();
    }

    @Test
    void should_run_a_program_with_stdin_to_its_end_through_the_wrapper_over_v4() throws Exception {
        start(true);
        assertWrapperRun();
    }

    private void assertWrapperRun() throws Exception {
        Out out = new Out();
        ChannelProcess p = run(out, "sh", "-c", "cat; echo done; exit 6").start();
        p.stdin().write("line\n".getBytes(StandardCharsets.UTF_8));
        p.stdin().close();
        assertThat(p.exit().get()).isEqualTo(6);
        p.outputEnd().get();
        assertThat(out.stdout()).isEqualTo("line\ndone\n");
    }

    @Test
    void should_kill_the_run_and_its_setsid_daemon_when_the_tree_is_killed() throws Exception {
        start(false);
        Out out = new Out();
        String pidFile = PodLayout.ROOT + "/daemon-" + UUID.randomUUID();
        ChannelProcess p = run(out, "sh", "-c", "setsid sh -c 'sleep 1000 & echo $! >\"$1\"' sh \"$1\" &"
                + " while [ ! -s \"$1\" ]; do sleep 0.01; done; echo up; sleep 1000", "prog", pidFile).start();
        while (!out.stdout().contains("up")) {
            Thread.sleep(10);
        }
        p.killTree();
        assertThat(p.exit().get()).isEqualTo(137);
        // The daemon left the program's session; the subreaper wrapper kept it in the tree, and the kill reached it.
        String state;
        do {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            exec.run("p1", List.of("sh", "-c", "read -r d <\"$1\"; s=$(grep State: /proc/$d/status 2>/dev/null);"
                    + " case $s in ''|*Z*) echo dead ;; *) echo alive ;; esac", "sh", pidFile), null, o, T);
            state = o.toString(StandardCharsets.UTF_8).trim();
        } while (!state.equals("dead"));
        assertThat(state).isEqualTo("dead");
    }

    @Test
    void should_kill_the_daemon_of_a_program_that_killed_its_wrapper_before_the_run_ends() throws Exception {
        start(false);
        Out out = new Out();
        String pidFile = PodLayout.ROOT + "/daemon-" + UUID.randomUUID();
        ChannelProcess p = run(out, "sh", "-c", "setsid sh -c 'sleep 1000 & echo $! >\"$1\"' sh \"$1\" </dev/null"
                + " >/dev/null 2>&1 & while [ ! -s \"$1\" ]; do sleep 0.01; done; echo up; read -r go; kill -9 $PPID",
                "prog", pidFile).start();
        while (!out.stdout().contains("up")) {
            Thread.sleep(10);
        }
        assertThat(daemonState(pidFile)).as("positive control: the daemon runs").isEqualTo("alive");
        p.stdin().write("go\n".getBytes(StandardCharsets.UTF_8));
        p.stdin().flush();
        // The wrapper died (137) and its own end never ran; the channel swept the orphans before the run ended:
        // SIGKILL was sent, and the kernel ends the daemon (bounded by the class timeout; without the sweep nothing
        // ever kills it).
        assertThat(p.exit().get()).isEqualTo(137);
        while (!daemonState(pidFile).equals("dead")) {
            Thread.sleep(10);
        }
    }

    private String daemonState(String pidFile) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        exec.run("p1", List.of("sh", "-c", "read -r d <\"$1\"; s=$(grep State: /proc/$d/status 2>/dev/null);"
                + " case $s in ''|*Z*) echo dead ;; *) echo alive ;; esac", "sh", pidFile), null, o, T);
        return o.toString(StandardCharsets.UTF_8).trim();
    }

    @Test
    void should_report_an_unknown_outcome_when_the_stream_breaks_mid_run() throws Exception {
        start(false);
        Out out = new Out();
        Run run = run(out, "sh", "-c", "echo started; sleep 1000");
        cluster.kubelet().breakNextExec(command -> command.stream().anyMatch(a -> a.contains("echo started")));
        ChannelProcess p = run.start();
        assertThat(p.exit().get()).isEqualTo(-1);
        assertThat(run.channel.failure()).isNotNull().hasMessageContaining("without an exit status");
    }

    @Test
    void should_throw_workspace_gone_when_the_pod_does_not_exist() {
        start(false);
        assertThatThrownBy(() -> exec.run("nope", List.of("true"), null, null, T))
                .isInstanceOf(WorkspaceGoneException.class);
        assertThatThrownBy(() -> new PodExecChannel(exec, "nope", PodLayout.CONTROL + "/x", null)
                .start(launch(List.of("true")), new Out())).isInstanceOf(WorkspaceGoneException.class);
    }

    private record Run(PodExecChannel channel, ProgramLaunch launch, OutputSink out) {
        ChannelProcess start() {
            return channel.start(launch, out);
        }
    }

    private Run run(OutputSink out, String... program) {
        String control = PodLayout.CONTROL + "/" + UUID.randomUUID();
        List<String> args = new ArrayList<>(List.of(control, PodLayout.ROOT + "/.run", PodScripts.STDIN_RAW,
                PodLayout.ROOT, "- - -", "0", "-", "-", "-", "-", "-", "env", "-i",
                "PATH=/usr/local/bin:/usr/bin:/bin"));
        args.addAll(List.of(program));
        return new Run(new PodExecChannel(exec, "p1", control, null),
                launch(PodScripts.runArgv(PodScripts.Reaper.PYTHON, args)), out);
    }

    private static ProgramLaunch launch(List<String> argv) {
        List<String> a = argv;
        if (!a.contains(PodScripts.BOOT)) {
            a = PodScripts.runArgv(PodScripts.Reaper.NONE, List.of(PodLayout.CONTROL + "/x", PodLayout.ROOT + "/.r",
                    PodScripts.STDIN_RAW, "/", "- - -", "0", "-", "-", "-", "-", "-", "true"));
        }
        return new ProgramLaunch(a, Map.of(), "/", null, T, 1 << 20, null);
    }

    static final class Out implements OutputSink {
        private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();

        @Override
        public synchronized void write(StdStream stream, byte[] b, int off, int len) {
            if (stream == StdStream.STDOUT) {
                stdout.write(b, off, len);
            }
        }

        synchronized String stdout() {
            return stdout.toString(StandardCharsets.UTF_8);
        }
    }
}
