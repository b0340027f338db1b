package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sweeper: in a real cluster the garbage collector deletes the pods of a deleted Lease, but nothing deletes a Lease
 * that merely stopped being renewed, and pods can outlive their time to live (a failed pod stays until deleted). This
 * finds both, for pods made by {@link PodWorkspaces} (those with a {@link PodLabels#TEMPLATE} label: pods of
 * agent-sandbox claims belong to their controller and are never touched). Runs on the engine's housekeeping thread, or
 * on the caller's; holds no state and no lock.
 *
 * <p>Clocks: a pod's age is its {@code metadata.creationTimestamp}, set by the API server, never the creating host's
 * {@link PodLabels#CREATED} label. A Lease's {@code renewTime} is written by the renewing host's clock and judged by
 * this host's, and a pod's creation time by the API server's: every comparison between two clocks allows
 * {@link #SKEW}, so a skew smaller than that never makes a live engine's pod look dead. A pod of a dead engine is
 * deleted that much later, which costs nothing.
 */
final class PodSweeper {

    private static final Logger LOG = LoggerFactory.getLogger(PodSweeper.class);

    /** The clock skew allowed between this host, the API server and other engines' hosts: {@value} ms. */
    static final long SKEW_MILLIS = 120_000;
    static final Duration SKEW = Duration.ofMillis(SKEW_MILLIS);

    private final PodWorkspaces ws;
    private final Clock clock;

    PodSweeper(PodWorkspaces pods) {
        this(pods, Clock.systemUTC());
    }

    /** A sweeper judging by {@code clock} (tests move it forward instead of making objects old). */
    PodSweeper(PodWorkspaces pods, Clock clock) {
        this.ws = pods;
        this.clock = clock;
    }

    /**
     * Deletes what dead engines left in the namespace: each expired Lease ({@code renewTime + leaseDurationSeconds}
     * passed, by more than the {@link #SKEW}) with its pods; pods whose engine has no Lease (created, by the API
     * server's clock, more than the skew before the Leases were listed, so never a pod of an engine just starting);
     * and any pod older than its {@code activeDeadlineSeconds} (plus the skew). This engine's live pods and those of
     * engines with a live Lease are kept. Idempotent; safe to run from several engines at once.
     *
     * @return how many pods were deleted
     */
    int sweep() {
        KubernetesClient client = ws.client;
        String namespace = ws.namespace;
        String engineId = ws.engineId;
        ZonedDateTime now = ZonedDateTime.now(clock.withZone(ZoneOffset.UTC));
        long listedAt = clock.millis();
        List<Lease> leases;
        List<Pod> pods;
        try {
            leases = client.leases().inNamespace(namespace).withLabel(PodLabels.OWNER, PodLabels.OWNER_VALUE).list()
                    .getItems();
        } catch (KubernetesClientException e) {
            throw ws.translate(e, "list", "leases");
        }
        Set<String> live = new HashSet<>();
        live.add(engineId);
        Set<String> expired = new HashSet<>();
        for (Lease l : leases) {
            String id = l.getMetadata().getLabels().get(PodLabels.ENGINE);
            if (id != null && !id.equals(engineId)) {
                (EngineLease.expired(l, now.minus(SKEW)) ? expired : live).add(id);
            }
        }
        try {
            pods = client.pods().inNamespace(namespace).withLabel(PodLabels.OWNER, PodLabels.OWNER_VALUE)
                    .withLabel(PodLabels.TEMPLATE).list().getItems();
        } catch (KubernetesClientException e) {
            throw ws.translate(e, "list", "pods");
        }
        int deleted = 0;
        for (Pod p : pods) {
            Map<String, String> l = p.getMetadata().getLabels();
            long created = serverCreated(p);
            Long ttl = p.getSpec() == null ? null : p.getSpec().getActiveDeadlineSeconds();
            boolean dead = !live.contains(l.get(PodLabels.ENGINE)) && created < listedAt - SKEW_MILLIS;
            boolean old = ttl != null && created != Long.MAX_VALUE
                    && created + ttl * 1000 < clock.millis() - SKEW_MILLIS;
            if (dead || old) {
                if (deletePod(p)) {
                    deleted++;
                    LOG.info("deleted workspace pod {} ({})", p.getMetadata().getName(),
                            dead ? "its engine " + l.get(PodLabels.ENGINE) + " is gone" : "past its time to live");
                }
            }
        }
        for (String id : expired) {
            try {
                client.leases().inNamespace(namespace).withName(EngineLease.name(id)).delete();
            } catch (KubernetesClientException e) {
                LOG.warn("could not delete the expired Lease of engine {}: {}", id, e.getMessage());
            }
        }
        return deleted;
    }

    /**
     * Deletes a listed pod unless it changed since it was listed (a pooled pod another engine adopted meanwhile);
     * a status change only, or a pod already gone, still counts as deleted.
     */
    boolean deletePod(Pod listed) {
        String name = listed.getMetadata().getName();
        Pod p = listed;
        for (int attempt = 0; attempt < 3 && p != null; attempt++) {
            if (!Objects.equals(listed.getMetadata().getLabels(), p.getMetadata().getLabels())) {
                return false;
            }
            try {
                ws.client.pods().inNamespace(ws.namespace).withName(name).lockResourceVersion(p.getMetadata()
                        .getResourceVersion()).delete();
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    LOG.warn("could not delete workspace pod {}: {}", name, e.getMessage());
                    return false;
                }
                p = ws.client.pods().inNamespace(ws.namespace).withName(name).get();
            }
        }
        return p == null;
    }

    /** When the API server created {@code p}, in epoch milliseconds; {@link Long#MAX_VALUE} when it does not say. */
    static long serverCreated(Pod p) {
        String ts = p.getMetadata().getCreationTimestamp();
        try {
            return ts == null ? Long.MAX_VALUE : Instant.parse(ts).toEpochMilli();
        } catch (DateTimeParseException e) {
            return Long.MAX_VALUE;
        }
    }

}
