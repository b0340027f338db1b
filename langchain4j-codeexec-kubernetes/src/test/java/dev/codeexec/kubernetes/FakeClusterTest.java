package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fake cluster behaves, on the wire, as an API server with a kubelet does. */
class FakeClusterTest {

    private FakeCluster cluster;
    private KubernetesClient client;

    @BeforeEach
    void startCluster() {
        Requirements.require(FakeCluster.available(), "root with bwrap, nsenter and setpriv (the fake cluster)");
        cluster = FakeCluster.start();
        client = cluster.client();
    }

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Pod pod(String name, String image) {
        return new PodBuilder().withNewMetadata().withName(name).addToLabels("app", "fake-test").endMetadata()
                .withNewSpec().withNewSecurityContext().withRunAsUser(PodLayout.DEFAULT_UID)
                .withRunAsGroup(PodLayout.DEFAULT_UID).endSecurityContext()
                .addNewContainer().withName(PodLayout.CONTAINER).withImage(image)
                .withCommand("sleep", "infinity")
                .addNewVolumeMount().withName("work").withMountPath(PodLayout.VOLUME).endVolumeMount()
                .addNewVolumeMount().withName("tmp").withMountPath(PodLayout.TMP).endVolumeMount()
                .endContainer()
                .addNewVolume().withName("work").withNewEmptyDir().endEmptyDir().endVolume()
                .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec().build();
    }

    private Pod runningPod(String name) {
        client.pods().resource(pod(name, "codeexec-python:bookworm")).create();
        return client.pods().withName(name).waitUntilReady(60, TimeUnit.SECONDS);
    }

    @Test
    void should_run_the_pod_when_fabric8_creates_it_and_waits_until_ready() throws Exception {
        Pod ready = runningPod("p1");

        assertThat(ready.getStatus().getPhase()).isEqualTo("Running");
        assertThat(ready.getStatus().getContainerStatuses().get(0).getReady()).isTrue();
        assertThat(cluster.kubelet().podCreations()).isEqualTo(1);
        FakePod fake = cluster.pod("p1").orElseThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        fake.exec(List.of("sh", "-c", "id -u; stat -c %u /codeexec; hostname"), null, out, null);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(PodLayout.DEFAULT_UID + "\n"
                + PodLayout.DEFAULT_UID + "\np1\n");
    }

    @Test
    void should_give_output_and_exit_code_when_fabric8s_own_exec_runs_a_command() throws Exception {
        runningPod("p1");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (ExecWatch watch = client.pods().withName("p1").writingOutput(out).writingError(err)
                .exec("sh", "-c", "echo hi; echo oops >&2; exit 3")) {
            assertThat(watch.exitCode().get(60, TimeUnit.SECONDS)).isEqualTo(3);
        }
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hi\n");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("oops\n");
        assertThat(cluster.kubelet().execs("p1")).isEqualTo(1);
        try (ExecWatch watch = client.pods().withName("p1").writingOutput(out).exec("true")) {
            assertThat(watch.exitCode().get(60, TimeUnit.SECONDS)).isZero();
        }
    }

    @Test
    void should_end_stdin_and_report_success_when_a_v5_client_sends_the_close_signal() {
        runningPod("p1");
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("cat"), true),
                FakeExecSocket.V5, FakeExecSocket.V4);
        assertThat(exec.protocol()).isEqualTo(FakeExecSocket.V5);
        exec.stdin("hello ");
        exec.stdin("world");
        exec.closeStdin();

        assertThat(exec.awaitEnd()).isEqualTo(1000);
        assertThat(exec.channel(1)).isEqualTo("hello world");
        assertThat(exec.channel(3)).isEqualTo("{\"metadata\":{},\"status\":\"Success\"}");
    }

    @Test
    void should_report_the_exit_code_cause_when_a_command_fails() {
        runningPod("p1");
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("sh", "-c", "exit 42"), false),
                FakeExecSocket.V5);
        assertThat(exec.awaitEnd()).isEqualTo(1000);
        assertThat(exec.channel(3)).contains("\"status\":\"Failure\"", "\"reason\":\"NonZeroExitCode\"",
                "{\"reason\":\"ExitCode\",\"message\":\"42\"}", "command terminated with non-zero exit code");
    }

    @Test
    void should_report_an_internal_error_without_exit_code_when_the_command_is_not_found() {
        runningPod("p1");
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("no-such-program"), false),
                FakeExecSocket.V5);
        assertThat(exec.awaitEnd()).isEqualTo(1000);
        assertThat(exec.channel(3)).contains("\"status\":\"Failure\"", "\"reason\":\"InternalError\"",
                "executable file not found in $PATH").doesNotContain("ExitCode");
    }

    @Test
    void should_refuse_v5_and_accept_v4_when_the_cluster_speaks_only_v4() {
        cluster.close();
        cluster = FakeCluster.startV4Only();
        client = cluster.client();
        runningPod("p1");
        var url = FakeRawExec.url(cluster, "p1", List.of("echo", "x"), false);

        FakeRawExec.Refused refused = FakeRawExec.refusal(url, FakeExecSocket.V5);
        assertThat(refused.status()).isEqualTo(403);
        assertThat(cluster.kubelet().execs("p1")).isZero();

        FakeRawExec both = FakeRawExec.open(url, FakeExecSocket.V5, FakeExecSocket.V4);
        assertThat(both.protocol()).isEqualTo(FakeExecSocket.V4);
        assertThat(both.awaitEnd()).isEqualTo(1000);
        assertThat(both.channel(1)).isEqualTo("x\n");
    }

    @Test
    void should_ignore_the_close_signal_when_the_protocol_is_v4() throws Exception {
        runningPod("p1");
        List<String> argv = List.of("sh", "-c", "while read l; do echo \"got $l\"; done; echo eof");
        FakeRawExec v4 = FakeRawExec.open(FakeRawExec.url(cluster, "p1", argv, true), FakeExecSocket.V4);
        assertThat(v4.protocol()).isEqualTo(FakeExecSocket.V4);
        v4.stdin("a\n");
        v4.closeStdin(); // no such frame in v4: ignored, stdin stays open
        v4.stdin("b\n");
        assertThat(v4.awaitChannel(1, "got b\n")).isTrue();
        assertThat(v4.channel(1)).isEqualTo("got a\ngot b\n");
        v4.close();
        v4.awaitEnd();

        // positive control: under v5 the same frame ends stdin; what follows it is never read
        FakeRawExec v5 = FakeRawExec.open(FakeRawExec.url(cluster, "p1", argv, true), FakeExecSocket.V5);
        v5.stdin("a\n");
        v5.closeStdin();
        v5.stdin("b\n");
        assertThat(v5.awaitEnd()).isEqualTo(1000);
        assertThat(v5.channel(1)).isEqualTo("got a\neof\n");
        assertThat(v5.channel(3)).contains("Success");
    }

    @Test
    void should_answer_404_when_the_exec_names_a_missing_pod() {
        runningPod("p1");
        FakeRawExec.Refused refused = FakeRawExec.refusal(FakeRawExec.url(cluster, "nope", List.of("true"), false),
                FakeExecSocket.V5);
        assertThat(refused.status()).isEqualTo(404);
        // positive control: the same exec into the existing pod works
        assertThat(FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("true"), false), FakeExecSocket.V5)
                .awaitEnd()).isEqualTo(1000);
    }

    @Test
    void should_kill_the_pods_processes_when_the_pod_is_deleted() throws Exception {
        runningPod("p1");
        runningPod("p2");
        long init1 = cluster.pod("p1").orElseThrow().initPid();
        long init2 = cluster.pod("p2").orElseThrow().initPid();

        client.pods().withName("p1").delete();
        assertThat(cluster.pod("p1")).isEmpty();
        assertThat(Files.exists(Path.of("/proc", Long.toString(init1)))).isFalse();
        // positive control: the other pod still runs, until a deletion by label takes it too
        assertThat(Files.exists(Path.of("/proc", Long.toString(init2)))).isTrue();
        client.pods().withLabel("app", "fake-test").delete();
        assertThat(cluster.pod("p2")).isEmpty();
        assertThat(Files.exists(Path.of("/proc", Long.toString(init2)))).isFalse();
    }

    @Test
    void should_break_the_stream_without_status_when_the_switch_is_set() {
        runningPod("p1");
        cluster.kubelet().breakNextExec();
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1",
                List.of("sh", "-c", "echo first; exec sleep 300"), false), FakeExecSocket.V5);
        // no status: an error close (1011), or the connection just ends (the JDK reports 1006, or an error)
        assertThat(exec.awaitEnd()).isIn(1011, 1006, -1);
        assertThat(exec.channel(3)).isEmpty();
        assertThat(exec.channel(1)).isEqualTo("first\n");
        // positive control: the switch is spent, the next exec ends normally
        FakeRawExec next = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("echo", "ok"), false),
                FakeExecSocket.V5);
        assertThat(next.awaitEnd()).isEqualTo(1000);
        assertThat(next.channel(3)).contains("Success");
    }

    @Test
    void should_leave_the_process_running_when_the_client_closes_early() throws Exception {
        runningPod("p1");
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("sh", "-c",
                "echo $$ > /codeexec/pid; echo started; cat >/dev/null; touch /codeexec/stdin-ended; exec sleep 300"),
                true), FakeExecSocket.V5);
        assertThat(exec.awaitChannel(1, "started")).isTrue();
        exec.close();
        exec.awaitEnd();

        // the stream's end closes the process's stdin, and the process goes on (it is not killed)
        FakePod fake = cluster.pod("p1").orElseThrow();
        int waited = fake.exec(List.of("timeout", "60", "sh", "-c",
                "while [ ! -e /codeexec/stdin-ended ]; do sleep 0.01; done"), null, null, null);
        assertThat(waited).as("stdin ended within a minute").isZero();
        String cmdline = "";
        for (int i = 0; i < 1000 && !cmdline.startsWith("sleep"); i++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            fake.exec(List.of("sh", "-c", "tr '\\0' ' ' < /proc/$(cat /codeexec/pid)/cmdline"), null, out, null);
            cmdline = out.toString(StandardCharsets.UTF_8); // sh may not have exec'd sleep yet
        }
        assertThat(cmdline).startsWith("sleep 300");
    }

    @Test
    void should_keep_the_pod_pending_when_its_image_cannot_be_pulled() {
        cluster.kubelet().unpullable().add("registry.invalid/none:1");
        client.pods().resource(pod("bad", "registry.invalid/none:1")).create();
        Pod pending = client.pods().withName("bad").waitUntilCondition(p -> p.getStatus() != null
                && p.getStatus().getContainerStatuses() != null && !p.getStatus().getContainerStatuses().isEmpty(),
                60, TimeUnit.SECONDS);
        assertThat(pending.getStatus().getPhase()).isEqualTo("Pending");
        assertThat(pending.getStatus().getContainerStatuses().get(0).getState().getWaiting().getReason())
                .isEqualTo("ErrImagePull");
        assertThat(cluster.pod("bad")).isEmpty();
    }

    @Test
    void should_mark_the_pod_failed_and_stop_it_when_evicted_or_oom_killed() {
        runningPod("p1");
        runningPod("p2");
        long init = cluster.pod("p1").orElseThrow().initPid();

        cluster.kubelet().evict(FakeCluster.NAMESPACE, "p1");
        cluster.kubelet().oomKill(FakeCluster.NAMESPACE, "p2");

        Pod evicted = client.pods().withName("p1").get();
        assertThat(evicted.getStatus().getPhase()).isEqualTo("Failed");
        assertThat(evicted.getStatus().getReason()).isEqualTo("Evicted");
        assertThat(Files.exists(Path.of("/proc", Long.toString(init)))).isFalse();
        Pod oom = client.pods().withName("p2").get();
        assertThat(oom.getStatus().getContainerStatuses().get(0).getState().getTerminated().getReason())
                .isEqualTo("OOMKilled");
        assertThat(oom.getStatus().getContainerStatuses().get(0).getState().getTerminated().getExitCode())
                .isEqualTo(137);
        assertThat(FakeRawExec.refusal(FakeRawExec.url(cluster, "p2", List.of("true"), false), FakeExecSocket.V5)
                .status()).isEqualTo(404);
    }

    @Test
    void should_run_as_the_containers_user_when_it_overrides_the_pods() throws Exception {
        Pod pod = pod("p1", "codeexec-python:bookworm");
        pod.getSpec().getContainers().get(0).setSecurityContext(new io.fabric8.kubernetes.api.model
                .SecurityContextBuilder().withRunAsUser(4242L).build());
        client.pods().resource(pod).create();
        client.pods().withName("p1").waitUntilReady(60, TimeUnit.SECONDS);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        cluster.pod("p1").orElseThrow().exec(List.of("sh", "-c", "id -u; id -g"), null, out, null);
        // the container's user, the pod's group
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("4242\n" + PodLayout.DEFAULT_UID + "\n");
    }

    @Test
    void should_carry_large_streams_whole_and_in_order_when_both_directions_are_busy() throws Exception {
        runningPod("p1");
        FakeRawExec out = FakeRawExec.open(FakeRawExec.url(cluster, "p1",
                List.of("sh", "-c", "seq 1 2000000"), false), FakeExecSocket.V5);
        assertThat(out.awaitEnd()).isEqualTo(1000);
        String text = out.channel(1);
        assertThat(text).startsWith("1\n2\n3\n").endsWith("\n1999999\n2000000\n");
        assertThat(text.split("\n")).hasSize(2_000_000);

        FakeRawExec in = FakeRawExec.open(FakeRawExec.url(cluster, "p1", List.of("sh", "-c", "cksum"), true),
                FakeExecSocket.V5);
        StringBuilder sent = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            String chunk = ("chunk " + i + " ").repeat(2000);
            sent.append(chunk);
            in.stdin(chunk);
        }
        in.closeStdin();
        assertThat(in.awaitEnd()).isEqualTo(1000);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        cluster.pod("p1").orElseThrow().exec(List.of("cksum"),
                new java.io.ByteArrayInputStream(sent.toString().getBytes(StandardCharsets.UTF_8)), expected, null);
        assertThat(in.channel(1)).isEqualTo(expected.toString(StandardCharsets.UTF_8));
    }

    @Test
    void should_store_custom_resources_when_their_kind_is_declared() {
        cluster.expectCustomResource(new io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext.Builder()
                .withGroup("agents.x-k8s.io").withVersion("v1beta1").withKind("SandboxClaim")
                .withPlural("sandboxclaims").withScope("Namespaced").withName("sandboxclaims.agents.x-k8s.io")
                .withStatusSubresource(true).build());
        var claims = client.genericKubernetesResources("agents.x-k8s.io/v1beta1", "SandboxClaim");
        claims.resource(new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
                .withApiVersion("agents.x-k8s.io/v1beta1").withKind("SandboxClaim")
                .withNewMetadata().withName("c1").endMetadata()
                .addToAdditionalProperties("spec", java.util.Map.of("warmPoolRef", java.util.Map.of("name", "pool")))
                .build()).create();
        assertThat(claims.withName("c1").get().getAdditionalProperties()).containsKey("spec");
        assertThat(cluster.kubelet().podCreations()).isZero();
    }

    @Test
    void should_end_a_running_exec_with_exit_137_when_its_pod_is_deleted() throws Exception {
        runningPod("p1");
        FakeRawExec exec = FakeRawExec.open(FakeRawExec.url(cluster, "p1",
                List.of("sh", "-c", "echo started; exec sleep 300"), false), FakeExecSocket.V5);
        assertThat(exec.awaitChannel(1, "started")).isTrue();

        client.pods().withName("p1").delete();

        assertThat(exec.awaitEnd()).isEqualTo(1000);
        assertThat(exec.channel(3)).contains("NonZeroExitCode", "{\"reason\":\"ExitCode\",\"message\":\"137\"}");
    }
}
