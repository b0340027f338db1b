package dev.codeexec.kubernetes;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine in agent-sandbox mode end to end on the {@link FakeCluster}: {@link FakeSandboxController} adopts each
 * claim with a pod of the engine's own hardened spec, which the fake kubelet runs for real. Shows that such a pod is
 * reported complete ({@link KubernetesEngine#hardeningOf}), runs programs, and that a claimed pod that dies (evicted,
 * OOM-killed, deleted, replaced) is explained as a gone workspace, not an unknown outcome.
 */
class KubernetesEngineClaimsTest {

    private static final AtomicInteger PODS = new AtomicInteger();

    /** A controller that adopts each claim with a Ready pod of {@code spec}, named {@code claimed-<n>}. */
    static FakeSandboxController controller(FakeCluster cluster, AtomicReference<PodSpec> spec) {
        KubernetesClient client = cluster.client();
        return new FakeSandboxController(client, FakeCluster.NAMESPACE, (c, claim) -> {
            String pod = "claimed-" + PODS.incrementAndGet();
            c.createPod(pod, null, spec.get(), Map.of());
            client.pods().withName(pod).waitUntilReady(1, TimeUnit.MINUTES);
            c.createSandbox(claim, "sb-" + pod, pod);
            c.setReady(claim, "True", "DependenciesReady", "Pod is Ready", "sb-" + pod);
        });
    }

    static PodSpec ownSpec(KubernetesEngine engine) {
        return PodSpecs.workspacePod(engine.podTemplate(), "x", Map.of(), List.of()).getSpec();
    }

    @Test
    void should_run_in_a_claimed_pod_of_the_engines_own_spec_and_report_it_complete() throws Exception {
        FakeCluster cluster = KubernetesTesting.cluster();
        AtomicReference<PodSpec> spec = new AtomicReference<>();
        try (KubernetesEngine engine = KubernetesTesting.engine().agentSandbox("pool").build();
             FakeSandboxController controller = controller(cluster, spec)) {
            spec.set(ownSpec(engine));
            Workspace ws = engine.manager().createWorkspace("claimed", WorkspacePolicy.DEFAULT);

            WorkspaceHardening hardening = engine.hardeningOf(ws);
            assertThat(hardening.missing()).isEmpty();
            assertThat(hardening.treeKill()).isTrue();
            assertThat(hardening.complete()).isTrue();
            assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", "echo hi")
                    .timeout(Duration.ofMinutes(1)).build()).stdout()).isEqualTo("hi\n");
            assertThat(engine.workspaces().whyGone(ws)).isEmpty();

            engine.manager().cleanup(ws);
            assertThat(controller.claims().list().getItems()).isEmpty();
            assertThatThrownBy(() -> engine.hardeningOf(ws)).isInstanceOf(WorkspaceGoneException.class);
        }
    }

    @Test
    void should_explain_a_claimed_pod_that_died_as_a_gone_workspace() throws Exception {
        FakeCluster cluster = KubernetesTesting.cluster();
        AtomicReference<PodSpec> spec = new AtomicReference<>();
        try (KubernetesEngine engine = KubernetesTesting.engine().agentSandbox("pool").build();
             FakeSandboxController controller = controller(cluster, spec)) {
            spec.set(ownSpec(engine));
            Workspace evicted = engine.manager().createWorkspace("evicted", WorkspacePolicy.DEFAULT);
            Workspace oomKilled = engine.manager().createWorkspace("oom", WorkspacePolicy.DEFAULT);
            Workspace deleted = engine.manager().createWorkspace("deleted", WorkspacePolicy.DEFAULT);
            Workspace replaced = engine.manager().createWorkspace("replaced", WorkspacePolicy.DEFAULT);

            cluster.kubelet().evict(FakeCluster.NAMESPACE, podOf(engine, evicted));
            cluster.kubelet().oomKill(FakeCluster.NAMESPACE, podOf(engine, oomKilled));
            cluster.client().pods().withName(podOf(engine, deleted)).delete();
            String again = podOf(engine, replaced);
            cluster.client().pods().withName(again).delete();
            controller.createPod(again, null, spec.get(), Map.of());

            assertThat(reason(engine, evicted)).contains("evicted by the kubelet");
            assertThat(reason(engine, oomKilled)).contains("OOMKilled");
            assertThat(reason(engine, deleted)).contains("the pod was deleted");
            assertThat(reason(engine, replaced)).contains("replaced it with a new pod of the same name");
        }
    }

    private static String podOf(KubernetesEngine engine, Workspace ws) {
        return engine.workspaces().pod(ws).pod();
    }

    private static String reason(KubernetesEngine engine, Workspace ws) {
        Optional<WorkspaceGoneException> gone = engine.workspaces().whyGone(ws);
        assertThat(gone).as("why workspace %s is gone", ws.id()).isPresent();
        assertThat(gone.get()).hasMessageContaining("SandboxClaim codeexec-");
        return gone.get().getMessage();
    }
}
