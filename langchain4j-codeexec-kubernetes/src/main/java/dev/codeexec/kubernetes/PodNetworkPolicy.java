package dev.codeexec.kubernetes;

import dev.codeexec.engine.UnsupportedCapabilityException;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NetworkPolicy of one engine's pods ({@link PodSpecs#workspacePolicy}): created before any pod, its spec put back
 * when someone changed it, and the namespace's other NetworkPolicies watched for one that would open the pods
 * ({@link PolicyConflicts}: policies add up). Found at the start, such a policy fails it; found later, new workspaces
 * are refused while it is there; with {@code acceptOtherPolicies} both are a logged error only.
 *
 * <p>Threads: {@link #ensure} runs in {@link PodWorkspaces}' constructor and then on its housekeeping thread only;
 * {@link #requireClosed} and {@link #openedBy} on any thread, reading the last finding through a volatile field.
 */
final class PodNetworkPolicy {

    private static final Logger LOG = LoggerFactory.getLogger(PodNetworkPolicy.class);

    private final PodWorkspaces ws;
    /** Other NetworkPolicies that open the pods, as last seen by a check; null while none does. */
    private volatile String openedBy;

    PodNetworkPolicy(PodWorkspaces ws) {
        this.ws = ws;
    }

    /**
     * Creates the NetworkPolicy, or puts back its spec when someone changed it; then lists the namespace's other
     * NetworkPolicies and records whether any of them lets the pods out ({@link PolicyConflicts}).
     */
    void ensure(boolean starting) {
        PodTemplate template = ws.template;
        String namespace = ws.namespace;
        String policyName = ws.policyName();
        NetworkPolicy want = PodSpecs.workspacePolicy(template, policyName, ws.templateSelector(), List.of());
        var client = ws.client;
        want.getMetadata().setNamespace(namespace);
        var policies = client.network().v1().networkPolicies().inNamespace(namespace);
        try {
            NetworkPolicy have = policies.withName(policyName).get();
            if (have == null) {
                try {
                    policies.resource(want).create();
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 409) { // another engine of the same template made it meanwhile
                        throw e;
                    }
                }
            } else if (!want.getSpec().equals(have.getSpec())) {
                LOG.warn("the NetworkPolicy {} in namespace {} was changed; putting its spec back", policyName,
                        namespace);
                policies.withName(policyName).edit(p -> {
                    p.setSpec(want.getSpec());
                    return p;
                });
            }
        } catch (KubernetesClientException e) {
            throw ws.translate(e, "create", "networkpolicies");
        }
        List<NetworkPolicy> all;
        try {
            all = policies.list().getItems();
        } catch (KubernetesClientException e) {
            throw ws.translate(e, "list", "networkpolicies");
        }
        Map<String, String> podLabels = new HashMap<>(template.labels());
        podLabels.putAll(ws.templateSelector());
        List<String> found = PolicyConflicts.find(all, policyName, podLabels);
        String was = openedBy;
        openedBy = found.isEmpty() ? null : String.join(", ", found);
        if (openedBy != null && !openedBy.equals(was) && (!starting || ws.settings.acceptOtherPolicies())) {
            LOG.error("{}{}", openedMessage(openedBy), ws.settings.acceptOtherPolicies()
                    ? " (accepted: acceptOtherNetworkPolicies)" : "; new workspaces are refused until it is gone");
        }
    }

    private String openedMessage(String by) {
        return "the deny-all NetworkPolicy " + ws.policyName() + " does not hold: in namespace '" + ws.namespace
                + "' other NetworkPolicies select the workspace pods and allow egress, and policies add up: " + by
                + ". Give the engine a namespace of its own, or exclude its pods from those policies (for example "
                + "a podSelector with '" + PodLabels.OWNER + "' DoesNotExist)";
    }

    /** The policies found to open the pods at the last check, or empty. */
    Optional<String> openedBy() {
        return Optional.ofNullable(openedBy);
    }

    /**
     * Throws unless the last check found no other policy that opens the pods, or such policies are accepted.
     *
     * @param what appended to the message: what is refused
     */
    void requireClosed(String what) {
        String by = openedBy;
        if (by != null && !ws.settings.acceptOtherPolicies()) {
            throw new UnsupportedCapabilityException(openedMessage(by) + what);
        }
    }
}
