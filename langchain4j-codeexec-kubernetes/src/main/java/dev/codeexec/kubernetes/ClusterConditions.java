package dev.codeexec.kubernetes;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sentences of {@link KubernetesEngine#clusterConditions()}: what the engine's guarantees rely on beyond the pod
 * spec it writes, one sentence each, for the operator to check on their cluster. Pure function (it logs the one
 * condition an operator chose that opens the pods).
 */
final class ClusterConditions {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterConditions.class);

    private ClusterConditions() {
    }

    /** What the engine's guarantees rely on that the pod spec cannot enforce by itself. */
    static List<String> of(PodTemplate t, boolean claimed) {
        List<String> c = new ArrayList<>(List.of(
                "NetworkPolicy: the deny-all policy holds only where the cluster's network plugin enforces "
                        + "NetworkPolicy (Calico, Cilium, ...; kindnet and plain flannel do not)",
                "other network policies: no other NetworkPolicy in the namespace may allow egress for these pods "
                        + "(policies add up; the engine refuses one it finds at start and refuses new workspaces "
                        + "while one is there), and no cluster-wide policy (AdminNetworkPolicy, "
                        + "BaselineAdminNetworkPolicy, Calico's or Cilium's own) may allow it either: those the "
                        + "engine cannot see",
                "seccomp RuntimeDefault and runAsNonRoot: applied by the kubelet and the container runtime",
                "ephemeral-storage and emptyDir size limits: the kubelet evicts a pod past them (it does not refuse "
                        + "writes)",
                "processes: limited only by the kubelet's podPidsLimit, where the cluster sets one (no pod field "
                        + "exists)"));
        if (t.runtimeClassName() != null) {
            c.add("RuntimeClass '" + t.runtimeClassName() + "': must exist, with its handler on the nodes");
        }
        if (t.egressProxy() != null) {
            LOG.warn("the workspace pods may reach the egress proxy {} of the pod template: what it forwards to is its "
                    + "own rules, not checked by the engine (networkAllowed is true)", t.egressProxy().url());
            c.add("egress proxy " + t.egressProxy().url() + ": the pods may reach it, and through it whatever it "
                    + "forwards to; its rules are the operator's, not checked by the engine (networkAllowed is "
                    + "true)");
        }
        if (claimed) {
            c.add("agent-sandbox: the SandboxTemplate's pod spec, checked against the engine's hardening at each "
                    + "claim");
            c.add("agent-sandbox: a claimed pod joins the engine's deny-all NetworkPolicy when labelled before its "
                    + "first use, enforced after the network plugin's own delay (blueprint pods carry the label)");
        }
        return List.copyOf(c);
    }
}
