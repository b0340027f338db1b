package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's heartbeat in the cluster: one {@code coordination.k8s.io/v1} Lease, {@code codeexec-engine-<id>}, that
 * owns every pod the engine creates. The engine renews it on a schedule; when the engine dies the Lease stops being
 * renewed, and any engine's sweeper deletes it once {@code renewTime + leaseDurationSeconds} has passed, upon which the
 * cluster's garbage collector deletes the pods it owns. Closing the engine deletes it at once.
 *
 * <p>The holder identity names the process ({@code host/pid}) for whoever looks with {@code kubectl}. An optional
 * owner of the Lease itself (the application's Deployment or Pod) ties the Lease, and through it the pods, to the
 * application's lifetime too.
 *
 * <p>Thread-safe: {@link #renew()} runs on the engine's housekeeping thread, {@link #ownerReference()} on any; the
 * Lease's uid only changes when a deleted Lease is created again, and is read through a volatile field.
 */
final class EngineLease {

    private static final Logger LOG = LoggerFactory.getLogger(EngineLease.class);

    static final String NAME_PREFIX = "codeexec-engine-";

    private final KubernetesClient client;
    private final String namespace;
    private final String engineId;
    private final Duration duration;
    private final OwnerReference owner;
    private volatile Lease lease;

    /**
     * Creates the Lease.
     *
     * @param duration how long the Lease stays valid without a renewal; renew well within it
     * @param owner    the Lease's own owner (in the same namespace), or null
     */
    EngineLease(KubernetesClient client, String namespace, String engineId, Duration duration, OwnerReference owner) {
        this.client = client;
        this.namespace = namespace;
        this.engineId = engineId;
        this.duration = duration;
        this.owner = owner;
        this.lease = create();
    }

    static String name(String engineId) {
        return NAME_PREFIX + engineId;
    }

    private Lease create() {
        ZonedDateTime now = now();
        Lease l = new LeaseBuilder().withNewMetadata().withName(name(engineId)).withNamespace(namespace)
                .addToLabels(PodLabels.engine(engineId))
                .withOwnerReferences(owner == null ? List.of() : List.of(owner))
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity(PodLabels.hostName() + "/" + ProcessHandle.current().pid())
                .withLeaseDurationSeconds((int) Math.max(1, duration.toSeconds()))
                .withAcquireTime(now).withRenewTime(now)
                .endSpec().build();
        return client.leases().inNamespace(namespace).resource(l).create();
    }

    static ZonedDateTime now() {
        return ZonedDateTime.now(ZoneOffset.UTC);
    }

    /** The owner reference every pod of the engine carries. */
    OwnerReference ownerReference() {
        Lease l = lease;
        return new OwnerReferenceBuilder().withApiVersion("coordination.k8s.io/v1").withKind("Lease")
                .withName(l.getMetadata().getName()).withUid(l.getMetadata().getUid()).build();
    }

    /** The Lease as last written. */
    Lease lease() {
        return lease;
    }

    /**
     * Moves {@code renewTime} to now. A Lease deleted behind the engine's back (by a sweeper that took the engine for
     * dead, or by hand) is created again: the cluster is then deleting the pods it owned, and later pods get the new
     * one as owner.
     */
    void renew() {
        try {
            lease = client.leases().inNamespace(namespace).withName(name(engineId))
                    .edit(l -> {
                        l.getSpec().setRenewTime(now());
                        return l;
                    });
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            LOG.warn("the Lease {} of this engine was deleted from namespace {}; the pods it owned are being "
                    + "deleted by the cluster; creating it again", name(engineId), namespace);
            lease = create();
        }
    }

    /** Deletes the Lease; the cluster then deletes whatever it still owns. */
    void delete() {
        client.leases().inNamespace(namespace).withName(name(engineId)).delete();
    }

    /**
     * Whether a Lease of some engine has run out: not renewed within its duration.
     *
     * @param l   a Lease with {@code renewTime} and {@code leaseDurationSeconds}; one lacking them has run out
     * @param now the time to judge at
     */
    static boolean expired(Lease l, ZonedDateTime now) {
        if (l.getSpec() == null || l.getSpec().getLeaseDurationSeconds() == null) {
            return true;
        }
        ZonedDateTime last = l.getSpec().getRenewTime() != null ? l.getSpec().getRenewTime()
                : l.getSpec().getAcquireTime();
        return last == null || last.plusSeconds(l.getSpec().getLeaseDurationSeconds()).isBefore(now);
    }
}
