package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What {@link KubernetesEngine.Builder#build()} does against the API server (fabric8's mock in CRUD mode, with
 * scripted refusals): a build that fails leaves nothing running or being made; the Lease gets the owner it should;
 * {@code describe()} says when the pods can reach a network.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesEngineBuildTest {

    static final String NS = "agents";
    static final String LEASES = "/apis/coordination.k8s.io/v1/namespaces/" + NS + "/leases";

    KubernetesMockServer server;
    KubernetesClient client;

    KubernetesEngine.Builder engine() {
        return KubernetesEngine.builder().client(client).namespace(NS).image("codeexec-python:bookworm")
                .sweepLeftovers(false);
    }

    static Set<String> engineThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("codeexec-k8s-")).collect(Collectors.toSet());
    }

    @Test
    void should_leave_no_thread_lease_or_pod_when_the_initial_sweep_is_forbidden() {
        server.expect().get().withPath(LEASES + "?labelSelector=" + PodLabels.OWNER.replace("/", "%2F") + "%3D"
                + PodLabels.OWNER_VALUE).andReturn(403, PodWorkspacesErrorsTest.status(403, "Forbidden",
                "leases.coordination.k8s.io is forbidden: cannot list resource \"leases\"")).once();
        Set<String> before = engineThreads();

        assertThatThrownBy(() -> engine().warmPool(2).sweepLeftovers(true).build())
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("list leases");

        // Nothing of the failed build remains: no thread of it (its pool would keep making pods, its renewal would
        // keep the Lease alive), no Lease, no pod.
        assertThat(engineThreads()).isSubsetOf(before);
        assertThat(client.leases().inNamespace(NS).withLabel(PodLabels.OWNER).list().getItems()).isEmpty();
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
        // positive control: the same build with the sweep allowed starts the threads (and close stops them)
        try (KubernetesEngine e = engine().warmPool(1).build()) {
            String shortId = e.instanceId().substring(0, 8);
            assertThat(engineThreads()).contains("codeexec-k8s-lease-" + shortId, "codeexec-k8s-pool-" + shortId);
        }
    }

    @Test
    void should_leave_nothing_behind_when_another_policy_opens_the_pods() {
        store(new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder().withNewMetadata()
                .withName("allow-all").endMetadata().withNewSpec().withNewPodSelector().endPodSelector()
                .withPolicyTypes("Egress").addNewEgress().endEgress().endSpec().build());
        Set<String> before = engineThreads();

        assertThatThrownBy(() -> engine().warmPool(2).build()).isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("'allow-all'");

        assertThat(engineThreads()).isSubsetOf(before);
        assertThat(client.leases().inNamespace(NS).withLabel(PodLabels.OWNER).list().getItems()).isEmpty();
        assertThat(client.pods().inNamespace(NS).list().getItems()).isEmpty();
    }

    void store(io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy p) {
        client.network().v1().networkPolicies().inNamespace(NS).resource(p).create();
    }

    @Test
    void should_say_network_is_allowed_when_the_template_opens_an_egress_proxy() {
        PodTemplate proxied = PodTemplate.builder().image("codeexec-python:bookworm")
                .egressProxy("10.96.0.20:3128").build();

        try (KubernetesEngine plain = engine().build();
             KubernetesEngine open = engine().pod(proxied).build()) {
            assertThat(plain.describe().networkAllowed()).isFalse();
            assertThat(open.describe().networkAllowed()).isTrue();
            assertThat(open.clusterConditions()).anySatisfy(c -> assertThat(c)
                    .contains("egress proxy http://10.96.0.20:3128").contains("not checked by the engine"));
            assertThat(plain.clusterConditions()).noneSatisfy(c -> assertThat(c).contains("egress proxy"))
                    .anySatisfy(c -> assertThat(c).contains("no other NetworkPolicy in the namespace may allow "
                            + "egress for these pods"));
        }
    }

    @Test
    void should_say_network_is_allowed_when_an_opening_policy_is_accepted() {
        store(PolicyConflictsTest.allowDns("allow-dns", new LabelSelectorBuilder().build()));

        assertThatThrownBy(() -> engine().build()).isInstanceOf(UnsupportedCapabilityException.class);
        try (KubernetesEngine accepted = engine().acceptOtherNetworkPolicies(true).build()) {
            assertThat(accepted.describe().networkAllowed()).isTrue();
        }
    }

    Pod ownPod(String name) {
        return client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewSpec().addNewContainer().withName("app").withImage("app").endContainer()
                .endSpec().build()).create();
    }

    OwnerReference leaseOwnerOf(KubernetesEngine e) {
        var refs = client.leases().inNamespace(NS).withName(EngineLease.name(e.instanceId())).get().getMetadata()
                .getOwnerReferences();
        return refs.isEmpty() ? null : refs.get(0);
    }

    @Test
    void should_make_the_jvms_pod_the_leases_owner_when_the_downward_api_names_it() {
        Pod app = ownPod("agent-app");
        KubernetesEngine.Builder b = engine();
        b.downwardApi = Map.of("POD_NAME", "agent-app", "POD_UID", app.getMetadata().getUid(), "POD_NAMESPACE", NS);

        try (KubernetesEngine e = b.build()) {
            assertThat(leaseOwnerOf(e)).satisfies(o -> {
                assertThat(o.getKind()).isEqualTo("Pod");
                assertThat(o.getApiVersion()).isEqualTo("v1");
                assertThat(o.getName()).isEqualTo("agent-app");
                assertThat(o.getUid()).isEqualTo(app.getMetadata().getUid());
            });
        }
    }

    @Test
    void should_give_the_lease_no_owner_when_the_named_pod_is_not_there() {
        // an owner that does not exist would have the garbage collector delete the Lease and the pods at once
        KubernetesEngine.Builder wrongUid = engine();
        ownPod("agent-app");
        wrongUid.downwardApi = Map.of("POD_NAME", "agent-app", "POD_UID", "not-its-uid");
        KubernetesEngine.Builder otherNamespace = engine();
        otherNamespace.downwardApi = Map.of("POD_NAME", "agent-app", "POD_UID", "x", "POD_NAMESPACE", "apps");
        KubernetesEngine.Builder none = engine();
        none.downwardApi = Map.of();

        try (KubernetesEngine a = wrongUid.build(); KubernetesEngine b = otherNamespace.build();
             KubernetesEngine c = none.build()) {
            assertThat(leaseOwnerOf(a)).isNull();
            assertThat(leaseOwnerOf(b)).isNull();
            assertThat(leaseOwnerOf(c)).isNull();
        }
    }

    @Test
    void should_put_the_given_owner_on_the_lease_and_refuse_a_pod_owner_that_is_not_there() {
        OwnerReference deployment = new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("Deployment")
                .withName("agent").withUid("dep-uid").withController(true).withBlockOwnerDeletion(true).build();

        try (KubernetesEngine e = engine().leaseOwner(deployment).build()) {
            assertThat(leaseOwnerOf(e)).isEqualTo(new OwnerReferenceBuilder().withApiVersion("apps/v1")
                    .withKind("Deployment").withName("agent").withUid("dep-uid").build());
        }
        OwnerReference missingPod = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod")
                .withName("gone").withUid("u").build();
        assertThatThrownBy(() -> engine().leaseOwner(missingPod).build()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("no pod 'gone'");
        assertThatThrownBy(() -> engine().leaseOwner(new OwnerReferenceBuilder().withKind("Pod").withName("x")
                .build()).build()).isInstanceOf(InvalidSpecException.class).hasMessageContaining("uid");
    }
}
