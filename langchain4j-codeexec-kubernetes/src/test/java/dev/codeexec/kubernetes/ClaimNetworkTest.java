package dev.codeexec.kubernetes;

import dev.codeexec.engine.PolicyViolationException;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The network fence of claimed pods ({@link ClaimNetwork}) against fabric8's mock API server in CRUD mode, with
 * {@link FakeSandboxController} playing the agent-sandbox controller: a template whose NetworkPolicy lets the pod out
 * (agent-sandbox's default) is refused, and the positive control, a pod no policy opens, is claimed, labelled into the
 * engine's deny-all policy. The rest checks the policy arithmetic as a pure function.
 */
@EnableKubernetesMockClient(crud = true)
class ClaimNetworkTest {

    static final String NS = "codeexec";
    static final String TEMPLATE_HASH = "agents.x-k8s.io/sandbox-template-ref-hash";

    KubernetesClient client;

    SandboxClaims claims(boolean asIs) {
        return new SandboxClaims(client, NS, new SandboxClaimSettings("pool", null, null, null, null, null, null,
                asIs), Clock.systemUTC());
    }

    FakeSandboxController adoptingFromTemplate(Map<String, String> templateLabels) {
        return new FakeSandboxController(client, NS, (c, claim) -> {
            c.createPod("sb-pod", null, FakeSandboxController.hardenedSpec("workspace", null), templateLabels);
            c.createSandbox(claim, "sb", "sb-pod");
            c.setReady(claim, "True", "DependenciesReady", "Pod is Ready", "sb");
        });
    }

    /** What agent-sandbox makes for a template that leaves out {@code networkPolicy}: public egress allowed. */
    NetworkPolicy controllersDefaultPolicy() {
        return new NetworkPolicyBuilder().withNewMetadata().withName("pool-template-network-policy").withNamespace(NS)
                .endMetadata().withNewSpec()
                .withNewPodSelector().withMatchLabels(Map.of(TEMPLATE_HASH, "1a2b3c4d")).endPodSelector()
                .withPolicyTypes("Ingress", "Egress")
                .withEgress(new NetworkPolicyEgressRuleBuilder().addNewTo().withNewIpBlock().withCidr("0.0.0.0/0")
                        .withExcept("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16")
                        .endIpBlock().endTo().build())
                .endSpec().build();
    }

    @Test
    void should_refuse_the_pod_and_delete_the_claim_when_the_templates_policy_allows_egress() throws Exception {
        client.network().v1().networkPolicies().inNamespace(NS).resource(controllersDefaultPolicy()).create();
        try (FakeSandboxController controller = adoptingFromTemplate(Map.of(TEMPLATE_HASH, "1a2b3c4d"))) {

            assertThatThrownBy(() -> claims(false).claim(Map.of(), List.of()))
                    .isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("NETWORK_DENIED (NetworkPolicy pool-template-network-policy selects pod "
                            + "sb-pod and allows egress)");
            assertThat(controller.claims().list().getItems()).isEmpty();
        }
    }

    @Test
    void should_claim_the_pod_behind_the_engines_deny_all_policy_when_no_policy_opens_it() throws Exception {
        try (FakeSandboxController controller = adoptingFromTemplate(Map.of(TEMPLATE_HASH, "1a2b3c4d"))) {
            ClaimedSandbox claimed = claims(false).claim(Map.of(), List.of());

            assertThat(claimed.missingHardening()).isEmpty();
            Pod pod = client.pods().inNamespace(NS).withName("sb-pod").get();
            assertThat(pod.getMetadata().getLabels()).containsEntry(ClaimNetwork.NETWORK_LABEL, "none")
                    .containsEntry(ClaimNetwork.CLAIM_LABEL, claimed.claimName());
            NetworkPolicy policy = client.network().v1().networkPolicies().inNamespace(NS)
                    .withName(ClaimNetwork.POLICY_NAME).get();
            assertThat(policy.getSpec().getPodSelector().getMatchLabels())
                    .isEqualTo(Map.of(ClaimNetwork.NETWORK_LABEL, "none"));
            assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
            assertThat(policy.getSpec().getIngress()).isEmpty();
            assertThat(policy.getSpec().getEgress()).isEmpty();
        }
    }

    @Test
    void should_report_the_opening_policy_when_the_template_is_accepted_as_is() throws Exception {
        client.network().v1().networkPolicies().inNamespace(NS).resource(controllersDefaultPolicy()).create();
        try (FakeSandboxController controller = adoptingFromTemplate(Map.of(TEMPLATE_HASH, "1a2b3c4d"))) {
            ClaimedSandbox claimed = claims(true).claim(Map.of(), List.of());

            assertThat(claimed.missingHardening().keySet()).containsExactly(PodHardening.NETWORK_DENIED);
            assertThat(claimed.missingHardening().get(PodHardening.NETWORK_DENIED)).containsExactly(
                    "NetworkPolicy pool-template-network-policy selects pod sb-pod and allows egress");
        }
    }

    @Test
    void should_put_the_deny_all_spec_back_when_someone_opened_the_engines_policy() throws Exception {
        NetworkPolicy opened = new NetworkPolicyBuilder(new ClaimNetwork(client, NS).policy()).editSpec()
                .withEgress(new NetworkPolicyEgressRuleBuilder().build()).endSpec().build();
        client.network().v1().networkPolicies().inNamespace(NS).resource(opened).create();
        try (FakeSandboxController controller = adoptingFromTemplate(Map.of())) {
            ClaimedSandbox claimed = claims(false).claim(Map.of(), List.of());

            assertThat(claimed.missingHardening()).isEmpty();
            assertThat(client.network().v1().networkPolicies().inNamespace(NS).withName(ClaimNetwork.POLICY_NAME).get()
                    .getSpec().getEgress()).isEmpty();
        }
    }

    @Test
    void should_refuse_the_pod_when_the_template_sets_the_network_label_to_another_value() throws Exception {
        try (FakeSandboxController controller = adoptingFromTemplate(Map.of(ClaimNetwork.NETWORK_LABEL, "open"))) {

            assertThatThrownBy(() -> claims(false).claim(Map.of(), List.of()))
                    .isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("NETWORK_DENIED (pod sb-pod: the template sets dev.codeexec/network=open");
        }
    }

    // ------------------------------------------------------------------ the policy arithmetic

    static Pod fencedPod() {
        return new PodBuilder().withNewMetadata().withName("p")
                .withLabels(Map.of(ClaimNetwork.NETWORK_LABEL, "none", "app", "sandbox")).endMetadata().build();
    }

    NetworkPolicy engines() {
        return new ClaimNetwork(client, NS).policy();
    }

    @Test
    void should_count_a_namespace_wide_dns_allowance_as_an_opening_when_its_selector_is_empty() {
        NetworkPolicy dnsBaseline = new NetworkPolicyBuilder().withNewMetadata().withName("allow-dns").endMetadata()
                .withNewSpec().withNewPodSelector().endPodSelector().withPolicyTypes("Egress")
                .withEgress(new NetworkPolicyEgressRuleBuilder().addNewPort().withProtocol("UDP")
                        .withPort(new io.fabric8.kubernetes.api.model.IntOrString(53)).endPort().build())
                .endSpec().build();

        assertThat(ClaimNetwork.openings(fencedPod(), List.of(engines(), dnsBaseline)))
                .containsExactly("NetworkPolicy allow-dns selects pod p and allows egress");
    }

    @Test
    void should_find_nothing_open_when_only_deny_policies_and_non_selecting_policies_exist() {
        NetworkPolicy ingressOnlyWithStrayEgress = new NetworkPolicyBuilder().withNewMetadata().withName("ingress-only")
                .endMetadata().withNewSpec().withNewPodSelector().endPodSelector().withPolicyTypes("Ingress")
                .withEgress(new NetworkPolicyEgressRuleBuilder().build()).endSpec().build();
        NetworkPolicy otherPods = new NetworkPolicyBuilder().withNewMetadata().withName("other-pods").endMetadata()
                .withNewSpec().withPodSelector(new LabelSelectorBuilder().addNewMatchExpression().withKey("app")
                        .withOperator("NotIn").withValues("sandbox").endMatchExpression().build())
                .withPolicyTypes("Egress").withEgress(new NetworkPolicyEgressRuleBuilder().build()).endSpec().build();

        assertThat(ClaimNetwork.openings(fencedPod(), List.of(engines(), ingressOnlyWithStrayEgress, otherPods)))
                .isEmpty();
    }

    @Test
    void should_report_an_unfenced_pod_when_the_engines_policy_is_absent_or_does_not_select_it() {
        Pod unlabelled = new PodBuilder().withNewMetadata().withName("p").withLabels(Map.of("app", "x")).endMetadata()
                .build();

        assertThat(ClaimNetwork.openings(fencedPod(), List.of())).singleElement().asString()
                .contains("is not selected by the engine's deny-all NetworkPolicy");
        assertThat(ClaimNetwork.openings(unlabelled, List.of(engines()))).singleElement().asString()
                .contains("is not selected by the engine's deny-all NetworkPolicy");
    }

    @Test
    void should_match_label_selectors_as_kubernetes_does() {
        Map<String, String> labels = Map.of("a", "1", "b", "2");
        LabelSelectorBuilder none = new LabelSelectorBuilder();

        assertThat(ClaimNetwork.selects(none.build(), labels)).isTrue();
        assertThat(ClaimNetwork.selects(null, labels)).isTrue();
        assertThat(ClaimNetwork.selects(new LabelSelectorBuilder().withMatchLabels(Map.of("a", "1")).build(), labels))
                .isTrue();
        assertThat(ClaimNetwork.selects(new LabelSelectorBuilder().withMatchLabels(Map.of("a", "2")).build(), labels))
                .isFalse();
        assertThat(ClaimNetwork.selects(expression("b", "In", "2", "3"), labels)).isTrue();
        assertThat(ClaimNetwork.selects(expression("b", "NotIn", "2"), labels)).isFalse();
        assertThat(ClaimNetwork.selects(expression("c", "Exists"), labels)).isFalse();
        assertThat(ClaimNetwork.selects(expression("c", "DoesNotExist"), labels)).isTrue();
    }

    static io.fabric8.kubernetes.api.model.LabelSelector expression(String key, String operator, String... values) {
        return new LabelSelectorBuilder().addNewMatchExpression().withKey(key).withOperator(operator)
                .withValues(values).endMatchExpression().build();
    }
}
