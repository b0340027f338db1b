package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds the other NetworkPolicies of a namespace that would open the workspace pods. NetworkPolicies are additive: a
 * pod selected by several policies may send whatever any of them allows, so the engine's deny-all holds only while no
 * other policy that selects its pods allows egress. A common namespace baseline (an empty {@code podSelector} allowing
 * DNS to kube-dns, or all egress) would otherwise let every workspace out.
 *
 * <p>A policy conflicts when its {@code podSelector} may select a workspace pod (an empty selector selects every pod)
 * and it has an egress rule that takes effect ({@code policyTypes} names {@code Egress}, or is absent and egress
 * rules are given). A policy that only denies (egress type, no rule) only narrows, and is no conflict. Labels whose
 * values differ from pod to pod (engine, workspace, creation time) are taken as matching any requirement on them, so
 * a selector on them counts as selecting: fail closed.
 *
 * <p>Cluster-wide policies (AdminNetworkPolicy, BaselineAdminNetworkPolicy, Calico's and Cilium's own) are not
 * NetworkPolicies and are not seen here: {@link KubernetesEngine#clusterConditions()} says so. Pure functions.
 */
final class PolicyConflicts {

    /** The pod labels whose values vary per pod: a requirement on them may hold for some pod. */
    static final Set<String> VARYING = Set.of(PodLabels.ENGINE, PodLabels.WORKSPACE, PodLabels.CREATED);

    private PolicyConflicts() {
    }

    /**
     * The policies among {@code policies} that select pods with {@code podLabels} and allow them egress, each
     * described in a few words for a message.
     *
     * @param policies  the namespace's NetworkPolicies
     * @param ownPolicy the name of the engine's own policy, which is skipped
     * @param podLabels the labels every workspace pod of the template has (the template's and the engine's fixed ones)
     */
    static List<String> find(List<NetworkPolicy> policies, String ownPolicy, Map<String, String> podLabels) {
        List<String> found = new ArrayList<>();
        for (NetworkPolicy p : policies) {
            String name = p.getMetadata() == null ? null : p.getMetadata().getName();
            if (ownPolicy.equals(name) || p.getSpec() == null || !allowsEgress(p)) {
                continue;
            }
            if (maySelect(p.getSpec().getPodSelector(), podLabels)) {
                found.add("'" + name + "' (" + (isEmpty(p.getSpec().getPodSelector()) ? "selects every pod"
                        : "its podSelector selects the workspace pods") + " and allows egress)");
            }
        }
        return found;
    }

    private static boolean allowsEgress(NetworkPolicy p) {
        var rules = p.getSpec().getEgress();
        if (rules == null || rules.isEmpty()) {
            return false;
        }
        List<String> types = p.getSpec().getPolicyTypes();
        return types == null || types.isEmpty() || types.contains("Egress");
    }

    private static boolean isEmpty(LabelSelector s) {
        return s == null || (s.getMatchLabels() == null || s.getMatchLabels().isEmpty())
                && (s.getMatchExpressions() == null || s.getMatchExpressions().isEmpty());
    }

    /** Whether {@code s} may select a pod with {@code labels} (and any values of the {@link #VARYING} labels). */
    static boolean maySelect(LabelSelector s, Map<String, String> labels) {
        if (s == null) {
            return true;
        }
        if (s.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : s.getMatchLabels().entrySet()) {
                if (!VARYING.contains(e.getKey()) && !e.getValue().equals(labels.get(e.getKey()))) {
                    return false;
                }
            }
        }
        if (s.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : s.getMatchExpressions()) {
                if (!VARYING.contains(r.getKey()) && !holds(r, labels.get(r.getKey()))) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean holds(LabelSelectorRequirement r, String value) {
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        return switch (r.getOperator()) {
            case "In" -> value != null && values.contains(value);
            case "NotIn" -> value == null || !values.contains(value);
            case "Exists" -> value != null;
            case "DoesNotExist" -> value == null;
            default -> true; // an operator this code does not know: assume it selects
        };
    }
}
