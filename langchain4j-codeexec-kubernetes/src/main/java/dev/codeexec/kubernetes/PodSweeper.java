package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.ZonedDateTime;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sweeper: in a real cluster the garbage collector deletes the pods of a deleted Lease, but nothing deletes a Lease
 * that merely stopped being renewed, and pods can outlive their time to live (a failed pod stays until deleted). This
 * finds both, for pods made by {@link PodWorkspaces} (those with a {@link PodLabels#TEMPLATE} label: pods of
 * agent-sandbox claims belong to their controller and are never touched). Runs on the engine's housekeeping thread, or
 * on the caller's; holds no state and no lock.
 */
final class PodSweeper {

    private static final Logger LOG = LoggerFactory.getLogger(PodSweeper.class);

    private final PodWorkspaces ws;

    PodSweeper(PodWorkspaces pods) {
        this.ws = pods;
    }

    /**
     * Deletes what dead engines left in the namespace: each expired Lease ({@code renewTime + leaseDurationSeconds}
     * passed) with its pods; pods whose engine has no Lease (created before the Leases were listed, so never a pod of
     * an engine just starting); and any pod older than its {@code activeDeadlineSeconds}. This engine's live pods and
     * those of engines with a live Lease are kept. Idempotent; safe to run from several engines at once.
     *
     * @return how many pods were deleted
     */
    int sweep() {
        KubernetesClient client = ws.client;
        String namespace = ws.namespace;
        String engineId = ws.engineId;
        ZonedDateTime now = EngineLease.now();
        long listedAt = System.currentTimeMillis();
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
                (EngineLease.expired(l, now) ? expired : live).add(id);
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
            long created = PodLabels.created(p);
            Long ttl = p.getSpec() == null ? null : p.getSpec().getActiveDeadlineSeconds();
            boolean dead = !live.contains(l.get(PodLabels.ENGINE)) && created < listedAt;
            boolean old = ttl != null && created != Long.MAX_VALUE
                    && created + ttl * 1000 < System.currentTimeMillis();
            if (dead || old) {
                if (ws.deletePod(p)) {
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

}
