package dev.codeexec.kubernetes;

import static dev.codeexec.spi.AbstractEngine.attempt;

import dev.codeexec.engine.BackendUnavailableException;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.function.Supplier;

/**
 * What a {@link KubernetesEngine} holds in its cluster: the client, the exec channel, its workspaces' pods (its own,
 * with their Lease, sweeper and warm pool, or agent-sandbox claims with theirs) and the egress tunnels. They are opened
 * together, and an open that fails part-way closes what it had started (threads, pool, Lease, tunnels, a client of its
 * own) before it throws, so a failed {@code build()} leaves nothing running. Not thread-safe itself: opened and
 * closed by the engine's constructor and {@code close()}.
 *
 * @param client     the cluster's client
 * @param ownsClient whether the client was made here (then closed with the rest), not given by the application
 * @param exec       commands in pods over {@code pods/exec}
 * @param pods       the engine's own pods, or null when pods are claimed
 * @param workspaces the workspaces' pods, whichever way they were made
 * @param egress     the egress tunnels of an engine with an egress policy, or null
 */
record EngineCluster(KubernetesClient client, boolean ownsClient, PodExec exec, PodWorkspaces pods,
                     KubernetesWorkspaces workspaces, PodEgress egress) {

    /**
     * Connects and makes the engine's cluster-side objects: the Lease and NetworkPolicy (or checks agent-sandbox),
     * the namespace's other policies, the sweep at start.
     *
     * @param egress makes the egress tunnels (null without a policy); called once, inside the open
     */
    static EngineCluster open(KubernetesEngine.Builder b, PodTemplate template, String engineId,
                              Supplier<PodEgress> egress) {
        boolean ownsClient = b.client == null;
        KubernetesClient client = ownsClient ? connect(b.context) : b.client;
        PodWorkspaces pods = null;
        ClaimKeeper keeper = null;
        PodEgress tunnels = null;
        try {
            tunnels = egress.get();
            String namespace = template.namespace() != null ? template.namespace()
                    : client.getNamespace() != null ? client.getNamespace() : "default";
            PodExec exec = new PodExec(client, namespace);
            if (b.sandboxWarmPool != null) {
                keeper = ClaimKeeper.open(client, namespace, engineId, template, b);
            } else {
                PodWorkspaces.Settings s = PodWorkspaces.Settings.defaults().withPoolSize(b.poolSize)
                        .withSweepAtStart(b.sweepLeftovers).withAcceptOtherPolicies(b.acceptOtherNetworkPolicies)
                        .withLeaseOwner(LeaseOwner.resolve(b.leaseOwner, b.downwardApi == null ? System::getenv
                                : b.downwardApi::get, client, namespace));
                if (b.readyTimeout != null) {
                    s = s.withReadyTimeout(b.readyTimeout);
                }
                pods = new PodWorkspaces(client, template.toBuilder().namespace(namespace).build(), engineId, s);
            }
            return new EngineCluster(client, ownsClient, exec, pods,
                    new KubernetesWorkspaces(pods, keeper, exec, b.acceptWithoutTreeKill, tunnels), tunnels);
        } catch (RuntimeException e) {
            // What was started goes: its threads, pool and Lease, the tunnels, a client of the engine's own.
            RuntimeException failure = e;
            if (pods != null) {
                failure = attempt(failure, pods::close);
            }
            if (keeper != null) {
                failure = attempt(failure, keeper::close);
            }
            if (tunnels != null) {
                failure = attempt(failure, tunnels::close);
            }
            throw ownsClient ? attempt(failure, client::close) : failure;
        }
    }

    private static KubernetesClient connect(String context) {
        try {
            return new KubernetesClientBuilder().withConfig(Config.autoConfigure(context)).build();
        } catch (KubernetesClientException | IllegalArgumentException e) {
            throw new BackendUnavailableException("no Kubernetes cluster is configured for KubernetesEngine"
                    + (context == null ? "" : " (context '" + context + "')") + ": set KUBECONFIG or ~/.kube/config, "
                    + "run in a cluster, or give the builder a client: " + e.getMessage(), e);
        }
    }

    /** Releases the workspaces' pods, the Lease and threads, the tunnels, then a client of the engine's own. */
    void close() {
        RuntimeException failure = attempt(null, workspaces::close);
        if (ownsClient) {
            failure = attempt(failure, client::close);
        }
        if (failure != null) {
            throw failure;
        }
    }

}
