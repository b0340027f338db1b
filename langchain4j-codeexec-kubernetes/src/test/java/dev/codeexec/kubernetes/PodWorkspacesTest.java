package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.WorkspaceGoneException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PodWorkspacesTest {

    static final String NS = "agents";
    static final PodTemplate TEMPLATE = PodTemplate.builder().namespace(NS).image("codeexec-python:bookworm").build();

    KubernetesMockServer server;
    KubernetesClient client;
    StatusSetter kubelet;
    PodWorkspaces ws;

    @BeforeEach
    void start() {
        kubelet = new StatusSetter(client, NS);
        ws = new PodWorkspaces(client, TEMPLATE, "engine1", PodWorkspaces.Settings.defaults());
    }

    @AfterEach
    void stop() {
        ws.close();
        kubelet.close();
    }

    Pod stored(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    @Test
    void should_store_the_hardened_pod_with_labels_and_an_owner_reference_to_the_lease_when_creating_a_workspace() {
        String name = ws.create("ws-1");

        Pod p = stored(name);
        Lease lease = client.leases().inNamespace(NS).withName("codeexec-engine-engine1").get();
        assertThat(name).matches("codeexec-[a-z0-9]{10}");
        assertThat(ws.pod("ws-1")).isEqualTo(name);
        assertThat(p.getMetadata().getLabels()).containsEntry(PodLabels.OWNER, "langchain4j-codeexec")
                .containsEntry(PodLabels.ENGINE, "engine1").containsEntry(PodLabels.WORKSPACE, "ws-1")
                .containsEntry(PodLabels.TEMPLATE, ws.templateHash).containsKey(PodLabels.CREATED);
        assertThat(p.getMetadata().getAnnotations()).containsEntry(PodLabels.PID,
                Long.toString(ProcessHandle.current().pid())).containsKey(PodLabels.HOST);
        assertThat(p.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("Lease");
            assertThat(o.getApiVersion()).isEqualTo("coordination.k8s.io/v1");
            assertThat(o.getName()).isEqualTo("codeexec-engine-engine1");
            assertThat(o.getUid()).isNotBlank().isEqualTo(lease.getMetadata().getUid());
        });
        // the spec stored is exactly the hardened one
        Pod expected = PodSpecs.workspacePod(TEMPLATE, name, Map.of(), List.of());
        assertThat(p.getSpec()).isEqualTo(expected.getSpec());
        assertThat(lease.getSpec().getHolderIdentity()).endsWith("/" + ProcessHandle.current().pid());
        assertThat(lease.getSpec().getLeaseDurationSeconds()).isEqualTo(60);
    }

    @Test
    void should_store_the_deny_all_network_policy_for_the_templates_pods_before_any_pod() {
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();

        NetworkPolicy np = client.network().v1().networkPolicies().inNamespace(NS).withName(ws.policyName()).get();

        assertThat(np.getSpec()).isEqualTo(PodSpecs.workspacePolicy(TEMPLATE, "x", ws.templateSelector(), List.of())
                .getSpec());
        assertThat(np.getSpec().getPodSelector().getMatchLabels()).containsEntry(PodLabels.TEMPLATE, ws.templateHash);
        assertThat(np.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        assertThat(np.getSpec().getEgress()).isEmpty();
        assertThat(np.getSpec().getIngress()).isEmpty();
    }

    @Test
    void should_put_the_policy_back_when_someone_changed_it() {
        client.network().v1().networkPolicies().inNamespace(NS).withName(ws.policyName()).edit(p -> {
            p.getSpec().setPolicyTypes(List.of("Ingress"));
            return p;
        });

        try (PodWorkspaces other = new PodWorkspaces(client, TEMPLATE, "engine2", PodWorkspaces.Settings.defaults())) {
            assertThat(client.network().v1().networkPolicies().inNamespace(NS).withName(ws.policyName()).get()
                    .getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        }
    }

    @Test
    void should_renew_the_lease_when_renewing() {
        ZonedDateTime before = client.leases().inNamespace(NS).withName("codeexec-engine-engine1").get().getSpec()
                .getRenewTime();

        ws.lease().renew();

        ZonedDateTime after = client.leases().inNamespace(NS).withName("codeexec-engine-engine1").get().getSpec()
                .getRenewTime();
        assertThat(after).isAfterOrEqualTo(before);
        assertThat(EngineLease.expired(ws.lease().lease(), EngineLease.now())).isFalse();
    }

    @Test
    void should_put_a_given_owner_on_the_lease_when_the_application_owns_the_engine() {
        OwnerReference app = new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("Deployment")
                .withName("agent").withUid("dep-uid").build();
        var settings = PodWorkspaces.Settings.defaults().withLeaseOwner(app);

        try (PodWorkspaces owned = new PodWorkspaces(client, TEMPLATE, "engine3", settings)) {
            assertThat(client.leases().inNamespace(NS).withName("codeexec-engine-engine3").get().getMetadata()
                    .getOwnerReferences()).containsExactly(app);
        }
    }

    @Test
    void should_delete_the_pod_when_the_workspace_is_deleted() {
        String name = ws.create("ws-1");

        ws.delete("ws-1");

        assertThat(stored(name)).isNull();
        assertThatThrownBy(() -> ws.pod("ws-1")).isInstanceOf(WorkspaceGoneException.class);
    }

    @Test
    void should_delete_every_pod_and_the_lease_when_closed() {
        ws.create("ws-1");
        ws.create("ws-2");
        Pod foreign = otherEnginesPod("engine9", System.currentTimeMillis());

        ws.close();
        ws.close();

        assertThat(client.pods().inNamespace(NS).withLabel(PodLabels.ENGINE, "engine1").list().getItems()).isEmpty();
        assertThat(client.leases().inNamespace(NS).withName("codeexec-engine-engine1").get()).isNull();
        assertThat(stored(foreign.getMetadata().getName())).isNotNull();
        assertThatThrownBy(() -> ws.create("ws-3")).isInstanceOf(WorkspaceGoneException.class)
                .hasMessageContaining("closed");
    }

    /**
     * A pod of another engine. The API server (the mock's clock) sets its creation time; {@code createdLabel} is the
     * creating host's clock in the {@link PodLabels#CREATED} label, which the sweeper must not trust.
     */
    Pod otherEnginesPod(String engine, long createdLabel) {
        return otherEnginesPod(engine, createdLabel, TEMPLATE);
    }

    Pod otherEnginesPod(String engine, long createdLabel, PodTemplate template) {
        Map<String, String> labels = PodLabels.of(engine, "ws-x", createdLabel);
        labels.put(PodLabels.TEMPLATE, ws.templateHash);
        Pod p = PodSpecs.workspacePod(template, "codeexec-" + engine + "-" + UUID.randomUUID().toString()
                .substring(0, 8), labels, List.of());
        return client.pods().inNamespace(NS).resource(p).create();
    }

    void lease(String engine, ZonedDateTime renewed) {
        client.leases().inNamespace(NS).resource(new LeaseBuilder().withNewMetadata()
                .withName(EngineLease.name(engine)).withLabels(PodLabels.engine(engine)).endMetadata()
                .withNewSpec().withHolderIdentity("elsewhere/1").withLeaseDurationSeconds(60)
                .withRenewTime(renewed).endSpec().build()).create();
    }

    /** A sweep judged an hour from now: every object made by the test is then far older than the skew allowed. */
    int sweepAnHourLater() {
        return new PodSweeper(ws, Clock.offset(Clock.systemUTC(), Duration.ofHours(1))).sweep();
    }

    @Test
    void should_delete_the_pods_and_lease_of_an_expired_engine_and_keep_a_live_ones_when_sweeping() {
        long now = System.currentTimeMillis();
        lease("dead", EngineLease.now().minusHours(1));
        lease("alive", EngineLease.now().plusHours(1)); // renewed just now, by the sweep's clock
        Pod deadPod = otherEnginesPod("dead", now);
        Pod alivePod = otherEnginesPod("alive", now);
        Pod orphan = otherEnginesPod("nolease", now);
        String mine = ws.create("ws-1");

        int deleted = sweepAnHourLater();

        assertThat(deleted).isEqualTo(2);
        assertThat(stored(deadPod.getMetadata().getName())).isNull();
        assertThat(stored(orphan.getMetadata().getName())).isNull();
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("dead")).get()).isNull();
        assertThat(stored(alivePod.getMetadata().getName())).isNotNull();
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("alive")).get()).isNotNull();
        assertThat(stored(mine)).isNotNull();
    }

    @Test
    void should_delete_a_pod_past_its_time_to_live_when_sweeping() {
        lease("alive", EngineLease.now().plusHours(1));
        Pod old = otherEnginesPod("alive", System.currentTimeMillis(), TEMPLATE.toBuilder()
                .activeDeadline(Duration.ofMinutes(1)).build());
        Pod young = otherEnginesPod("alive", System.currentTimeMillis());

        sweepAnHourLater();

        assertThat(stored(old.getMetadata().getName())).isNull();
        assertThat(stored(young.getMetadata().getName())).isNotNull();
    }

    @Test
    void should_leave_pods_it_did_not_make_when_sweeping_and_closing() {
        // an agent-sandbox pod, say: labelled as ours, but without a template: its controller owns it
        Map<String, String> labels = PodLabels.of("engine1", "claim", System.currentTimeMillis() - 1000);
        Pod claimed = client.pods().inNamespace(NS).resource(PodSpecs.workspacePod(TEMPLATE, "claimed", labels,
                List.of())).create();

        sweepAnHourLater();
        ws.close();

        assertThat(stored(claimed.getMetadata().getName())).isNotNull();
    }

    @Test
    void should_keep_a_pod_of_an_engine_whose_lease_is_listed_later_when_sweeping() {
        // a pod created after the sweep listed the Leases may belong to an engine just starting: never deleted
        Pod future = otherEnginesPod("starting", System.currentTimeMillis() + 60_000);

        ws.sweep();

        assertThat(stored(future.getMetadata().getName())).isNotNull();
    }

    @Test
    void should_keep_a_new_pod_of_a_starting_engine_when_its_hosts_clock_is_behind() {
        // The engine starting elsewhere has no Lease listed yet, and its host's clock is ten minutes behind: its
        // label says the pod is old, the API server says it was just created. The sweeper believes the server.
        Pod starting = otherEnginesPod("starting", System.currentTimeMillis() - 600_000);

        ws.sweep();

        assertThat(stored(starting.getMetadata().getName())).isNotNull();
        // positive control: the same pod, still without a Lease an hour later, belongs to a dead engine
        sweepAnHourLater();
        assertThat(stored(starting.getMetadata().getName())).isNull();
    }

    @Test
    void should_keep_a_live_engines_pods_when_its_hosts_clock_is_behind_the_sweepers() {
        // renewed just now by a host whose clock is 90 s behind: past its 60 s by this host's clock, within the skew
        lease("skewed", EngineLease.now().minusSeconds(90));
        lease("gone", EngineLease.now().minusHours(1));
        Pod skewed = otherEnginesPod("skewed", System.currentTimeMillis() - 600_000);
        Pod gone = otherEnginesPod("gone", System.currentTimeMillis() - 600_000);

        ws.sweep();

        assertThat(stored(skewed.getMetadata().getName())).isNotNull();
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("skewed")).get()).isNotNull();
        // positive control: in the same sweep, an engine that has not renewed for an hour is dead whatever the skew
        // (its pod, just created by the server's clock, goes with its Lease: the garbage collector's part)
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("gone")).get()).isNull();
        sweepAnHourLater();
        assertThat(stored(gone.getMetadata().getName())).isNull();
    }

    @Test
    void should_report_a_pod_deleted_behind_the_engines_back_as_gone() {
        String name = ws.create("ws-1");
        client.pods().inNamespace(NS).withName(name).delete();
        Await.until("pod deleted", () -> stored(name) == null);

        assertThat(ws.whyGone("ws-1")).get().extracting(Throwable::getMessage).asString()
                .contains(name).contains("ws-1").contains("deleted");
        assertThatThrownBy(() -> ws.requireAlive("ws-1")).isInstanceOf(WorkspaceGoneException.class);
    }

    @Test
    void should_report_a_live_pod_as_not_gone() {
        ws.create("ws-1");

        assertThat(ws.whyGone("ws-1")).isEmpty();
        ws.requireAlive("ws-1");
    }

    @Test
    void should_name_eviction_when_the_pod_was_evicted_mid_life() {
        String name = ws.create("ws-1");
        kubelet.set(stored(name), StatusSetter.evicted());

        assertThat(ws.whyGone("ws-1")).get().extracting(Throwable::getMessage).asString()
                .contains("evicted").contains("ephemeral local storage");
    }

    @Test
    void should_name_oom_kill_when_the_container_ran_out_of_memory_mid_life() {
        String name = ws.create("ws-1");
        kubelet.set(stored(name), StatusSetter.oomKilled());

        assertThatThrownBy(() -> ws.requireAlive("ws-1")).isInstanceOf(WorkspaceGoneException.class)
                .hasMessageContaining("OOMKilled").hasMessageContaining("memory limit");
    }

    @Test
    void should_name_the_deadline_when_the_pod_outlived_its_time_to_live() {
        String name = ws.create("ws-1");
        kubelet.set(stored(name), new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Failed")
                .withReason("DeadlineExceeded").build());

        assertThat(ws.whyGone("ws-1")).get().extracting(Throwable::getMessage).asString()
                .contains("activeDeadlineSeconds");
    }

    @Test
    void should_label_a_workspace_with_an_unusual_id_with_a_valid_label_value() {
        String name = ws.create("-Alice's workspace/ü-");

        assertThat(stored(name).getMetadata().getLabels().get(PodLabels.WORKSPACE)).matches(
                "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
        assertThat(ws.pod("-Alice's workspace/ü-")).isEqualTo(name);
    }

    static Pod copy(Pod p) {
        return new PodBuilder(p).build();
    }
}
