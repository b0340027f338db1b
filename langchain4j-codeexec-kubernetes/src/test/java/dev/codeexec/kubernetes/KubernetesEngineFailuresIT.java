package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a user of the engine sees when the cluster fails them, end to end on the fake cluster: each failure a typed
 * exception naming its cause, the engine still usable afterwards.
 */
class KubernetesEngineFailuresIT {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    private static RunProgramSpec sh(String script) {
        return RunProgramSpec.builder("sh").args("-c", script).timeout(Duration.ofMinutes(2)).build();
    }

    @Test
    void should_name_the_image_and_keep_no_pod_when_the_image_cannot_be_pulled() {
        FakeCluster cluster = KubernetesTesting.cluster();
        cluster.kubelet().unpullable().add("registry.invalid/nothing:1");
        try (KubernetesEngine engine = KubernetesTesting.engine().image("registry.invalid/nothing:1")
                .readyTimeout(Duration.ofMinutes(1)).build()) {
            assertThatThrownBy(() -> engine.manager().createWorkspace("pull", WorkspacePolicy.DEFAULT))
                    .isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("registry.invalid/nothing:1");
            assertThat(engine.workspaces().workspaces()).isEmpty();
            // The engine is still usable: the same engine's next workspace is not affected by the refusal.
            assertThat(cluster.client().pods().withLabel(PodLabels.ENGINE, engine.instanceId()).list().getItems()
                    .stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null)).isEmpty();
        }
    }

    @Test
    void should_report_the_eviction_when_the_pod_is_evicted_and_keep_the_engine_usable() {
        FakeCluster cluster = KubernetesTesting.cluster();
        try (KubernetesEngine engine = KubernetesTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("evicted", WorkspacePolicy.DEFAULT);
            String pod = engine.workspaces().pod(ws).pod();
            cluster.kubelet().evict(FakeCluster.NAMESPACE, pod);
            assertThatThrownBy(() -> engine.runner().runProgram(ws, sh("echo hi")))
                    .isInstanceOf(CodeExecException.class)
                    .satisfies(e -> assertThat(e instanceof WorkspaceGoneException
                            || e instanceof BackendUnavailableException).isTrue());
            Workspace next = engine.manager().createWorkspace("after", WorkspacePolicy.DEFAULT);
            assertThat(engine.runner().runProgram(next, sh("echo ok")).stdout()).isEqualTo("ok\n");
        }
    }

    @Test
    void should_report_an_unknown_outcome_when_the_exec_stream_breaks_after_the_start() {
        FakeCluster cluster = KubernetesTesting.cluster();
        try (KubernetesEngine engine = KubernetesTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("broken", WorkspacePolicy.DEFAULT);
            cluster.kubelet().breakNextExec(command -> command.stream().anyMatch(a -> a.contains("echo started")));
            // Safe outcomes: the break came before the program started (backend unavailable, nothing ran) or after
            // (outcome unknown, exit -1). Never a result that claims success.
            assertThatThrownBy(() -> engine.runner().runProgram(ws, sh("echo started; sleep 30")))
                    .satisfies(e -> {
                        assertThat(e).isInstanceOfAny(RunOutcomeUnknownException.class,
                                BackendUnavailableException.class);
                        if (e instanceof RunOutcomeUnknownException u) {
                            assertThat(u.partialResult().exitCode()).isEqualTo(-1);
                        }
                    });
            RunResult again = engine.runner().runProgram(ws, sh("echo again"));
            assertThat(again.stdout()).isEqualTo("again\n");
        }
    }

    @Test
    void should_end_stdin_and_run_under_protocol_v4_when_the_server_does_not_offer_v5() {
        try (FakeCluster v4 = FakeCluster.startV4Only();
             KubernetesEngine engine = KubernetesTesting.engine(v4).build()) {
            Workspace ws = engine.manager().createWorkspace("v4", WorkspacePolicy.DEFAULT);
            RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", "cat; echo end")
                    .stdin("line\n").timeout(Duration.ofMinutes(2)).build());
            assertThat(r.stdout()).isEqualTo("line\nend\n");
            assertThat(engine.exec().protocol()).isEqualTo(ExecSocket.Protocol.V4);
        }
    }

    @Test
    void should_refuse_a_disk_quota_the_pod_cannot_enforce() {
        try (KubernetesEngine engine = KubernetesTesting.engine().build()) {
            assertThatThrownBy(() -> engine.manager().createWorkspace("quota",
                    new WorkspacePolicy(1 << 20)))
                    .isInstanceOf(UnsupportedCapabilityException.class);
        }
    }
}
