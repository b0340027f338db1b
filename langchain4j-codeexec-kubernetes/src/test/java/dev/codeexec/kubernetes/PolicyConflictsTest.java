package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.UnsupportedCapabilityException;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * NetworkPolicies add up: another policy of the namespace that selects the workspace pods and allows egress opens them
 * whatever the engine's deny-all says. The engine refuses to start, or to create workspaces, while one is there; a
 * policy of other pods, or one that only denies, changes nothing.
 */
@EnableKubernetesMockClient(crud = true)
class PolicyConflictsTest {

    static final String NS = PodWorkspacesTest.NS;
    static final PodTemplate TEMPLATE = PodWorkspacesTest.TEMPLATE.toBuilder().labels(Map.of("team", "agents"))
            .build();

    KubernetesMockServer server;
    KubernetesClient client;
    StatusSetter kubelet;

    @BeforeEach
    void start() {
        kubelet = new StatusSetter(client, NS);
    }

    @AfterEach
    void stop() {
        kubelet.close();
    }

    /** A namespace baseline: DNS to kube-dns for every pod it selects. */
    static NetworkPolicy allowDns(String name, io.fabric8.kubernetes.api.model.LabelSelector selector) {
        return new NetworkPolicyBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
                .withNewSpec().withPodSelector(selector).withPolicyTypes("Egress")
                .withEgress(new NetworkPolicyEgressRuleBuilder().addNewTo().withNewNamespaceSelector()
                        .addToMatchLabels("kubernetes.io/metadata.name", "kube-system").endNamespaceSelector().endTo()
                        .addNewPort().withProtocol("UDP").withPort(new IntOrString(53)).endPort().build())
                .endSpec().build();
    }

    void store(NetworkPolicy p) {
        client.network().v1().networkPolicies().inNamespace(NS).resource(p).create();
    }

    PodWorkspaces start(String engineId, PodWorkspaces.Settings settings) {
        return new PodWorkspaces(client, TEMPLATE, engineId, settings);
    }

    @Test
    void should_refuse_to_start_and_leave_no_lease_when_a_policy_for_every_pod_allows_egress() {
        store(allowDns("allow-dns", new LabelSelectorBuilder().build()));

        assertThatThrownBy(() -> start("engine1", PodWorkspaces.Settings.defaults()))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("'allow-dns' (selects every pod and allows egress)")
                .hasMessageContaining("policies add up");
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine1")).get()).isNull();
    }

    @Test
    void should_start_when_the_other_policies_select_other_pods_or_only_deny() {
        store(allowDns("web-dns", new LabelSelectorBuilder().addToMatchLabels("app", "web").build()));
        store(allowDns("other-team", new LabelSelectorBuilder().addToMatchLabels("team", "web").build()));
        store(allowDns("not-codeexec", new LabelSelectorBuilder().addNewMatchExpression()
                .withKey(PodLabels.OWNER).withOperator("DoesNotExist").endMatchExpression().build()));
        store(new NetworkPolicyBuilder().withNewMetadata().withName("deny-egress").endMetadata().withNewSpec()
                .withNewPodSelector().endPodSelector().withPolicyTypes("Egress").endSpec().build());

        try (PodWorkspaces ws = start("engine2", PodWorkspaces.Settings.defaults())) {
            assertThat(ws.openedBy()).isEmpty();
            assertThat(ws.create("ws-1")).startsWith("codeexec-");
        }
    }

    @Test
    void should_refuse_new_workspaces_while_an_opening_policy_is_there_when_it_appears_later() {
        try (PodWorkspaces ws = start("engine3", PodWorkspaces.Settings.defaults())) {
            ws.create("ws-1");
            store(allowDns("team-egress", new LabelSelectorBuilder().addNewMatchExpression().withKey("team")
                    .withOperator("In").withValues("agents", "web").endMatchExpression().build()));

            ws.checkPolicies();

            assertThat(ws.openedBy()).get().asString().contains("team-egress");
            assertThatThrownBy(() -> ws.create("ws-2")).isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining("refusing to create a workspace");
            // positive control: once the policy is gone, workspaces are created again
            client.network().v1().networkPolicies().inNamespace(NS).withName("team-egress").delete();
            Await.until("policy deleted", () -> client.network().v1().networkPolicies().inNamespace(NS)
                    .withName("team-egress").get() == null);
            ws.checkPolicies();
            assertThat(ws.openedBy()).isEmpty();
            assertThat(ws.create("ws-2")).startsWith("codeexec-");
        }
    }

    @Test
    void should_start_and_say_so_when_other_policies_are_accepted() {
        store(allowDns("allow-dns", new LabelSelectorBuilder().build()));

        try (PodWorkspaces ws = start("engine4", PodWorkspaces.Settings.defaults().withAcceptOtherPolicies(true))) {
            assertThat(ws.openedBy()).get().asString().contains("allow-dns");
            assertThat(ws.create("ws-1")).startsWith("codeexec-");
        }
    }

    @Test
    void should_count_a_selector_on_per_pod_labels_as_selecting() {
        Map<String, String> pod = Map.of(PodLabels.OWNER, PodLabels.OWNER_VALUE, PodLabels.TEMPLATE, "abc",
                "team", "agents");

        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addToMatchLabels(PodLabels.WORKSPACE, "x")
                .build(), pod)).isTrue();
        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addToMatchLabels(PodLabels.TEMPLATE, "abc")
                .build(), pod)).isTrue();
        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addToMatchLabels(PodLabels.TEMPLATE, "def")
                .build(), pod)).isFalse();
        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addNewMatchExpression().withKey("team")
                .withOperator("NotIn").withValues("agents").endMatchExpression().build(), pod)).isFalse();
        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addNewMatchExpression().withKey("app")
                .withOperator("NotIn").withValues("web").endMatchExpression().build(), pod)).isTrue();
        assertThat(PolicyConflicts.maySelect(new LabelSelectorBuilder().addNewMatchExpression().withKey("app")
                .withOperator("Exists").endMatchExpression().build(), pod)).isFalse();
    }

    @Test
    void should_ignore_egress_rules_of_a_policy_whose_types_leave_egress_out() {
        NetworkPolicy ingressOnly = new NetworkPolicyBuilder(allowDns("ingress-only", new LabelSelectorBuilder()
                .build())).editSpec().withPolicyTypes("Ingress").endSpec().build();
        NetworkPolicy untyped = new NetworkPolicyBuilder(allowDns("untyped", new LabelSelectorBuilder().build()))
                .editSpec().withPolicyTypes(List.of()).endSpec().build();

        assertThat(PolicyConflicts.find(List.of(ingressOnly, untyped), "codeexec-ws-x", Map.of()))
                .singleElement().asString().contains("untyped");
    }
}
