package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The warm pool: Ready pods labelled {@code workspace=pool}, handed to a new workspace so that it does not wait for a
 * pod to be scheduled and started. Each engine keeps {@code size} pooled pods of its own; it may adopt any pooled pod
 * of the same template ({@link PodLabels#TEMPLATE}) in the namespace, whichever engine made it.
 *
 * <p>Adoption is one JSON patch of the pooled pod that sets its workspace and engine labels and makes this engine's Lease
 * its owner, sent with the resourceVersion the pod was listed at: when two adopters (threads or engines) race for one
 * pod, the API server applies one patch and answers the other 409 Conflict, and the loser tries the next pod. A pod
 * that is not Ready, is being deleted, or has failed is never adopted. No pooled pod free: the caller makes a new one.
 *
 * <p>Threads: {@link #adopt} runs on callers' threads, concurrently (the API server arbitrates); the refill runs on
 * {@code codeexec-k8s-pool-<id>}, on a schedule and when an adoption wakes it, one refill at a time.
 */
final class PodPool {

    private static final Logger LOG = LoggerFactory.getLogger(PodPool.class);
    /** How often the pool is checked besides after each adoption. */
    private static final long CHECK_MILLIS = 10_000;

    private final PodWorkspaces pods;
    private final int size;
    private final ScheduledExecutorService filler;
    /** Adoptions lost to another adopter (409), for tests and diagnostics. */
    final java.util.concurrent.atomic.AtomicInteger conflicts = new java.util.concurrent.atomic.AtomicInteger();

    PodPool(PodWorkspaces pods, int size, String shortId) {
        this.pods = pods;
        this.size = size;
        this.filler = Executors.newSingleThreadScheduledExecutor(PodWorkspaces.daemon("codeexec-k8s-pool-" + shortId));
        filler.scheduleWithFixedDelay(this::refillQuietly, 0, CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Takes a pooled pod for a workspace.
     *
     * @param workspaceLabel the workspace label the pod gets
     * @return the adopted pod's name, or empty when no pooled pod is free
     */
    Optional<String> adopt(String workspaceLabel) {
        List<Pod> free;
        try {
            Map<String, String> selector = new LinkedHashMap<>(pods.templateSelector());
            selector.put(PodLabels.WORKSPACE, PodLabels.POOL);
            free = pods.client.pods().inNamespace(pods.namespace).withLabels(selector).list().getItems();
        } catch (KubernetesClientException e) {
            throw pods.translate(e, "list", "pods");
        }
        // Oldest first: they have the least time to live left.
        free = free.stream().filter(PodFailures::ready).filter(p -> PodFailures.goneReason(p).isEmpty())
                .sorted(Comparator.comparingLong(PodLabels::created)).toList();
        for (Pod p : free) {
            if (take(p, workspaceLabel)) {
                wake();
                return Optional.of(p.getMetadata().getName());
            }
        }
        wake();
        return Optional.empty();
    }

    /** One adoption attempt; false when another adopter was first or the pod went. */
    private boolean take(Pod p, String workspaceLabel) {
        // A JSON patch (RFC 6902): a merge patch would do, but the API server's replacing of lists is not what every
        // implementation does. The resourceVersion the pod was listed at makes the patch conditional: the API server
        // answers 409 when the pod changed since (another adopter took it).
        List<Map<String, Object>> ops = List.of(
                op("/metadata/resourceVersion", p.getMetadata().getResourceVersion()),
                op("/metadata/labels/" + escape(PodLabels.WORKSPACE), workspaceLabel),
                op("/metadata/labels/" + escape(PodLabels.ENGINE), pods.engineId),
                op("/metadata/ownerReferences", List.of(pods.lease().ownerReference())));
        String patch = Serialization.asJson(ops);
        try {
            pods.client.pods().inNamespace(pods.namespace).withName(p.getMetadata().getName())
                    .patch(PatchContext.of(PatchType.JSON), patch);
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409 || e.getCode() == 404) {
                conflicts.incrementAndGet();
                LOG.debug("pooled pod {} taken by another adopter", p.getMetadata().getName());
                return false;
            }
            throw pods.translate(e, "patch", "pods");
        }
    }

    private static Map<String, Object> op(String path, Object value) {
        Map<String, Object> op = new LinkedHashMap<>();
        op.put("op", "replace");
        op.put("path", path);
        op.put("value", value);
        return op;
    }

    /** A JSON pointer segment (RFC 6901). */
    private static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }

    /** Asks the filler for a refill now. */
    private void wake() {
        if (!filler.isShutdown()) {
            try {
                filler.execute(this::refillQuietly);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
        }
    }

    private void refillQuietly() {
        try {
            refill();
        } catch (RuntimeException e) {
            LOG.warn("could not refill the warm pool: {}", e.getMessage());
        }
    }

    /** Creates pooled pods of this engine until it has {@code size} that may still become Ready, and waits for them. */
    void refill() {
        Map<String, String> mine = new LinkedHashMap<>(PodLabels.engine(pods.engineId));
        mine.put(PodLabels.WORKSPACE, PodLabels.POOL);
        long have = pods.client.pods().inNamespace(pods.namespace).withLabels(mine).list().getItems().stream()
                .filter(p -> PodFailures.goneReason(p).isEmpty()).count();
        for (long i = have; i < size && !pods.closed() && !Thread.currentThread().isInterrupted(); i++) {
            pods.awaitReady(pods.createPod(PodLabels.POOL));
        }
    }

    /** Stops refilling; the pooled pods are deleted with the engine's others. */
    void close() {
        filler.shutdownNow();
        try {
            filler.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
