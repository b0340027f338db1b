package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.net.HttpURLConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The network fence of claimed agent-sandbox pods. The operator's {@code SandboxTemplate} decides the controller's
 * NetworkPolicy, and its default lets a pod reach the public internet; NetworkPolicies add up, so a policy of the
 * engine's own cannot take that away. The engine therefore does two things and believes only what it reads back:
 * <ol>
 *   <li>it keeps one deny-all NetworkPolicy, {@value #POLICY_NAME}, selecting pods labelled
 *       {@value #NETWORK_LABEL}{@code =}{@value #NETWORK_VALUE} (created when the engine is built, put back when
 *       changed), and labels each claimed pod so before the pod is used (a pod made from
 *       {@link SandboxBlueprints} carries the label from its start);</li>
 *   <li>it lists the namespace's NetworkPolicies and reports every one that selects the pod and allows any ingress
 *       or egress, and a fence that is not in place (the engine's policy missing or changed, the label not on the
 *       pod, the engine not allowed to create the one or patch the other).</li>
 * </ol>
 * Whatever it reports is {@link PodHardening#NETWORK_DENIED} missing. Labels the agent-sandbox controller propagates
 * from the template are kept in sync by it, so a template that sets {@value #NETWORK_LABEL} to another value is
 * reported too (the controller would put its value back over the engine's).
 *
 * <p>Why not a selector on the claim: agent-sandbox (v0.5) puts {@code agents.x-k8s.io/claim-uid} on the Sandbox's
 * pod template, but its sandbox controller drops every {@code agents.x-k8s.io/} label from what it copies onto pods;
 * and a claim's {@code additionalPodMetadata} only takes labels of domains the controller allows
 * ({@code sandbox.users.io} by default). A label the engine patches onto the pod is one it controls.
 *
 * <p>Thread-safe: no state beyond its configuration; the API server serialises the rest.
 */
final class ClaimNetwork {

    /** The label the engine's deny-all policy selects on. */
    static final String NETWORK_LABEL = PodLabels.PREFIX + "network";
    static final String NETWORK_VALUE = "none";
    /** The label naming the claim a pod serves, for {@code kubectl}. */
    static final String CLAIM_LABEL = PodLabels.PREFIX + "claim";
    /** The engine's deny-all policy's name; every engine in the namespace shares it. */
    static final String POLICY_NAME = "codeexec-claimed-deny-all";

    private final KubernetesClient client;
    private final String namespace;

    ClaimNetwork(KubernetesClient client, String namespace) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
    }

    /** The deny-all policy: both directions governed, no rule in either. */
    NetworkPolicy policy() {
        return new NetworkPolicyBuilder()
                .withNewMetadata().withName(POLICY_NAME).withNamespace(namespace)
                .withLabels(Map.of(PodLabels.OWNER, PodLabels.OWNER_VALUE)).endMetadata()
                .withNewSpec()
                .withNewPodSelector().withMatchLabels(Map.of(NETWORK_LABEL, NETWORK_VALUE)).endPodSelector()
                .withPolicyTypes("Ingress", "Egress")
                .withIngress(List.of())
                .withEgress(List.of())
                .endSpec()
                .build();
    }

    /**
     * Creates the deny-all policy, or puts its spec back when someone changed it.
     *
     * @throws KubernetesClientException when the API server refuses or cannot be reached
     */
    void ensurePolicy() {
        NetworkPolicy want = policy();
        var policies = client.network().v1().networkPolicies().inNamespace(namespace);
        NetworkPolicy have = policies.withName(POLICY_NAME).get();
        if (have == null) {
            try {
                policies.resource(want).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) { // another engine made it meanwhile
                    throw e;
                }
            }
        } else if (!want.getSpec().equals(have.getSpec())) {
            policies.withName(POLICY_NAME).edit(p -> {
                p.setSpec(want.getSpec());
                return p;
            });
        }
    }

    /**
     * Puts a claimed pod behind the deny-all policy and says what still lets traffic through: empty when the pod is
     * fenced. Called before the pod is used.
     *
     * @param pod       the claimed pod, as read
     * @param claimName its claim, for the {@value #CLAIM_LABEL} label
     * @return the problems, each a sentence; {@link PodHardening#NETWORK_DENIED} is missing when not empty
     * @throws KubernetesClientException when the API server fails other than by refusing (403)
     */
    List<String> fence(Pod pod, String claimName) {
        List<String> problems = new ArrayList<>();
        String name = pod.getMetadata().getName();
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        String templateValue = labels.get(NETWORK_LABEL);
        if (templateValue != null && !NETWORK_VALUE.equals(templateValue)) {
            problems.add("pod " + name + ": the template sets " + NETWORK_LABEL + "=" + templateValue
                    + ", which its controller keeps over the engine's " + NETWORK_VALUE);
        }
        try {
            ensurePolicy();
        } catch (KubernetesClientException e) {
            problems.add(refused(e, "create the NetworkPolicy " + POLICY_NAME));
        }
        Pod labelled = pod;
        try {
            labelled = client.pods().inNamespace(namespace).withName(name).edit(p -> new PodBuilder(p).editMetadata()
                    .addToLabels(NETWORK_LABEL, NETWORK_VALUE).addToLabels(CLAIM_LABEL, claimName).endMetadata()
                    .build());
        } catch (KubernetesClientException e) {
            problems.add(refused(e, "label pod " + name));
        }
        List<NetworkPolicy> policies;
        try {
            policies = client.network().v1().networkPolicies().inNamespace(namespace).list().getItems();
        } catch (KubernetesClientException e) {
            problems.add(refused(e, "list the namespace's NetworkPolicies"));
            return problems;
        }
        problems.addAll(openings(labelled, policies));
        return problems;
    }

    /** A refusal (403) as a problem; any other failure is rethrown. */
    private String refused(KubernetesClientException e, String what) {
        if (e.getCode() != HttpURLConnection.HTTP_FORBIDDEN) {
            throw e;
        }
        return "the engine may not " + what + " in namespace " + namespace + " (RBAC: get, list, create and patch "
                + "on networkpolicies, patch on pods)";
    }

    /**
     * What lets traffic reach or leave {@code pod}, as a pure function of the pod and the namespace's policies: the
     * engine's policy absent, not deny-all or not selecting the pod; any other policy that selects the pod and has a rule
     * for a direction it governs.
     *
     * @param pod      the pod as it is now (its labels)
     * @param policies every NetworkPolicy in the pod's namespace
     */
    static List<String> openings(Pod pod, List<NetworkPolicy> policies) {
        List<String> problems = new ArrayList<>();
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        String name = pod.getMetadata().getName();
        boolean fenced = false;
        for (NetworkPolicy p : policies) {
            NetworkPolicySpec spec = p.getSpec();
            if (spec == null || !selects(spec.getPodSelector(), labels)) {
                continue;
            }
            List<String> types = spec.getPolicyTypes() == null || spec.getPolicyTypes().isEmpty()
                    ? defaultTypes(spec) : spec.getPolicyTypes();
            boolean ingress = types.contains("Ingress") && spec.getIngress() != null && !spec.getIngress().isEmpty();
            boolean egress = types.contains("Egress") && spec.getEgress() != null && !spec.getEgress().isEmpty();
            if (POLICY_NAME.equals(p.getMetadata().getName()) && types.containsAll(List.of("Ingress", "Egress"))
                    && !ingress && !egress) {
                fenced = true;
            } else if (ingress || egress) {
                problems.add("NetworkPolicy " + p.getMetadata().getName() + " selects pod " + name + " and allows "
                        + (ingress && egress ? "ingress and egress" : ingress ? "ingress" : "egress"));
            }
        }
        if (!fenced) {
            problems.add("pod " + name + " is not selected by the engine's deny-all NetworkPolicy " + POLICY_NAME
                    + " (missing, changed, or the pod lacks " + NETWORK_LABEL + "=" + NETWORK_VALUE + ")");
        }
        return problems;
    }

    /** Kubernetes' default when {@code policyTypes} is empty: Ingress always, Egress when there are egress rules. */
    private static List<String> defaultTypes(NetworkPolicySpec spec) {
        return spec.getEgress() != null && !spec.getEgress().isEmpty() ? List.of("Ingress", "Egress")
                : List.of("Ingress");
    }

    /** Whether a label selector matches {@code labels}; an empty or absent selector matches every pod. */
    static boolean selects(LabelSelector selector, Map<String, String> labels) {
        if (selector == null) {
            return true;
        }
        if (selector.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : selector.getMatchLabels().entrySet()) {
                if (!e.getValue().equals(labels.get(e.getKey()))) {
                    return false;
                }
            }
        }
        for (LabelSelectorRequirement r : selector.getMatchExpressions() == null
                ? List.<LabelSelectorRequirement>of() : selector.getMatchExpressions()) {
            String value = labels.get(r.getKey());
            List<String> values = r.getValues() == null ? List.of() : r.getValues();
            boolean ok = switch (r.getOperator()) {
                case "In" -> value != null && values.contains(value);
                case "NotIn" -> value == null || !values.contains(value);
                case "Exists" -> value != null;
                case "DoesNotExist" -> value == null;
                default -> true; // an operator this code does not know: assume it selects (fail closed)
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
