package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of an engine's agent-sandbox claims beyond one workspace: the engine's {@link EngineLease} (the same
 * heartbeat as in pod mode), which every claim names as its owner, so the cluster's garbage collector deletes the
 * claims, and with them their sandboxes and pods, once the Lease is deleted; the sweeper of claims whose engine is
 * gone; and the deny-all NetworkPolicy of claimed pods ({@link ClaimNetwork}), created before the first claim and put
 * back when changed. Each claim also carries a {@code lifecycle.shutdownTime} ({@link SandboxClaims}), so that the
 * controller deletes it when its lifetime ends even if no engine is left to sweep.
 *
 * <p>The sweep judges an engine by its Lease alone, read after the claims were listed: an engine creates its Lease
 * before its first claim, so a listed claim whose engine has no Lease, or an expired one, is a dead engine's. No
 * clock other than the Lease's own renew time is compared.
 *
 * <p>Threads: {@code codeexec-k8s-claims-<id>} renews the Lease every third of its duration, checks the policy, and
 * sweeps every {@code sweepInterval}; it runs no caller code and holds no lock. {@link #sweep()} may also run on a
 * caller's thread; it holds no state.
 */
final class ClaimKeeper implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClaimKeeper.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String engineId;
    private final SandboxClaims claims;
    private final EngineLease lease;
    private final ScheduledExecutorService housekeeping;

    /**
     * Creates the Lease and the deny-all policy, and starts the housekeeping thread.
     *
     * @param settings the Lease's duration and the sweep interval (as for the engine's own pods)
     * @param asIs     true when claimed pods are accepted without the engine's hardening, its policy included
     * @throws BackendUnavailableException when the Lease cannot be created, or the policy cannot be and the claims'
     *                                     templates are not accepted as they are
     */
    ClaimKeeper(KubernetesClient client, String namespace, String engineId, SandboxClaims claims,
                PodWorkspaces.Settings settings, boolean asIs) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.engineId = Objects.requireNonNull(engineId, "engineId");
        this.claims = Objects.requireNonNull(claims, "claims");
        try {
            this.lease = new EngineLease(client, namespace, engineId, settings.leaseDuration(), settings.leaseOwner());
        } catch (KubernetesClientException e) {
            throw translate(e, "create", "leases");
        }
        try {
            claims.network().ensurePolicy();
        } catch (KubernetesClientException e) {
            if (!asIs) {
                quietly(lease::delete);
                throw translate(e, "create", "networkpolicies");
            }
            LOG.warn("could not create the NetworkPolicy {} in namespace {}; claimed pods are accepted without it: {}",
                    ClaimNetwork.POLICY_NAME, namespace, e.getMessage());
        }
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(
                PodWorkspaces.daemon("codeexec-k8s-claims-" + engineId.substring(0, Math.min(8, engineId.length()))));
        long renew = Math.max(1000, settings.leaseDuration().toMillis() / 3);
        housekeeping.scheduleWithFixedDelay(this::renew, renew, renew, TimeUnit.MILLISECONDS);
        long sweep = Math.max(1000, settings.sweepInterval().toMillis());
        housekeeping.scheduleWithFixedDelay(this::sweepQuietly, sweep, sweep, TimeUnit.MILLISECONDS);
    }

    /**
     * Claim mode's start, for {@link KubernetesEngine}: the claims' settings from the builder (a claim lives at most
     * as long as a pod of the engine's own, {@code activeDeadline}, 12 hours by default), the CRDs checked, the
     * keeper started, and, unless the builder turned it off, a first sweep (a failed one is only logged).
     */
    static ClaimKeeper open(KubernetesClient client, String namespace, String engineId, PodTemplate template,
                            KubernetesEngine.Builder b) {
        SandboxClaims claims = new SandboxClaims(client, namespace, new SandboxClaimSettings(b.sandboxWarmPool, null,
                b.readyTimeout, template.activeDeadline(), null, PodLayout.CONTAINER, template.runtimeClassName(),
                b.acceptUnhardenedSandbox), Clock.systemUTC());
        claims.requireInstalled();
        ClaimKeeper keeper = new ClaimKeeper(client, namespace, engineId, claims, PodWorkspaces.Settings.defaults(),
                b.acceptUnhardenedSandbox);
        if (b.sweepLeftovers) {
            keeper.sweepQuietly();
        }
        return keeper;
    }

    /** The claims this keeper looks after. */
    SandboxClaims claims() {
        return claims;
    }

    /** The owner reference every claim of this engine carries. */
    OwnerReference ownerReference() {
        return lease.ownerReference();
    }

    /** The labels of a new claim: owner, engine, workspace (so the sweeper and {@code kubectl} find it). */
    Map<String, String> labels(String workspaceId) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(PodLabels.OWNER, PodLabels.OWNER_VALUE);
        labels.put(PodLabels.ENGINE, engineId);
        labels.put(PodLabels.WORKSPACE, PodLabels.value(workspaceId));
        return labels;
    }

    private void renew() {
        try {
            lease.renew();
            claims.network().ensurePolicy();
        } catch (RuntimeException e) {
            LOG.warn("could not renew the engine's Lease {} or its NetworkPolicy in namespace {}: {}",
                    EngineLease.name(engineId), namespace, e.getMessage());
        }
    }

    /** {@link #sweep()}, logging instead of throwing; for the housekeeping thread and the engine's start. */
    void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.warn("the sweep of leftover SandboxClaims in namespace {} failed: {}", namespace, e.getMessage());
        }
    }

    /**
     * Deletes the claims of engines that are gone: each claim labelled with this library's owner label whose engine
     * has no Lease, or an expired one (which is deleted too, so the garbage collector takes whatever else it owns).
     * Idempotent; safe to run from several engines at once.
     *
     * @return how many claims were deleted
     * @throws BackendUnavailableException when the claims or a Lease cannot be read
     */
    int sweep() {
        List<GenericKubernetesResource> listed;
        try {
            listed = claims.claims().withLabel(PodLabels.OWNER, PodLabels.OWNER_VALUE).list().getItems();
        } catch (KubernetesClientException e) {
            throw translate(e, "list", "sandboxclaims");
        }
        Map<String, List<String>> byEngine = new LinkedHashMap<>();
        for (GenericKubernetesResource claim : listed) {
            Map<String, String> labels = claim.getMetadata().getLabels();
            String id = labels == null ? null : labels.get(PodLabels.ENGINE);
            if (id != null && !id.equals(engineId)) {
                byEngine.computeIfAbsent(id, k -> new ArrayList<>()).add(claim.getMetadata().getName());
            }
        }
        int deleted = 0;
        for (Map.Entry<String, List<String>> engine : byEngine.entrySet()) {
            Lease l;
            try {
                l = client.leases().inNamespace(namespace).withName(EngineLease.name(engine.getKey())).get();
            } catch (KubernetesClientException e) {
                throw translate(e, "get", "leases");
            }
            if (l != null && !EngineLease.expired(l, EngineLease.now())) {
                continue;
            }
            for (String name : engine.getValue()) {
                try {
                    claims.release(name);
                    deleted++;
                    LOG.info("deleted SandboxClaim {}: its engine {} is gone", name, engine.getKey());
                } catch (RuntimeException e) {
                    LOG.warn("could not delete SandboxClaim {} of engine {}: {}", name, engine.getKey(), e.getMessage());
                }
            }
            if (l != null) {
                quietly(() -> client.leases().inNamespace(namespace).withName(EngineLease.name(engine.getKey()))
                        .delete());
            }
        }
        return deleted;
    }

    /** Stops the housekeeping and deletes the Lease (the claims were released before). Idempotent. */
    @Override
    public void close() {
        housekeeping.shutdownNow();
        try {
            housekeeping.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            lease.delete();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw translate(e, "delete", "leases");
            }
        }
    }

    private BackendUnavailableException translate(KubernetesClientException e, String verb, String resource) {
        var t = PodFailures.translate(e, verb, resource, namespace, String.valueOf(client.getMasterUrl()));
        return t instanceof BackendUnavailableException b ? b : new BackendUnavailableException(t.getMessage(), e);
    }

    private static void quietly(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warn("could not clean up: {}", e.getMessage());
        }
    }
}
