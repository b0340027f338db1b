package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.WorkspaceGoneException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod lifecycle of one engine: a hardened pod per workspace ({@link PodSpecs}), made Ready or explained, deleted
 * with its workspace and when the engine closes; the engine's {@link EngineLease} that owns every pod, so deleting the
 * Lease (by the engine's close, a sweep of any engine in the namespace once it expired, by hand, or by the garbage
 * collector when the Lease's own {@link LeaseOwner} is deleted) deletes them; the sweeper of pods that dead engines
 * left; the warm pool ({@link PodPool}).
 *
 * <p>Lifecycle: the constructor creates the Lease and the NetworkPolicy (before any pod, so no pod is ever unfenced),
 * checks that no other NetworkPolicy of the namespace opens the pods ({@link PolicyConflicts}), sweeps when asked to,
 * and only then starts the housekeeping thread and, with a pool, the pool's thread: a constructor that fails leaves
 * no thread, no Lease and no pod behind. {@link #create} gives a workspace a Ready pod
 * (a pooled one when there is one); {@link #pod} finds it; {@link #whyGone} explains a pod an exec could not reach;
 * {@link #delete} removes it; {@link #sweep} removes leftovers of dead engines; {@link #close} removes everything of
 * this engine.
 *
 * <p>Pods carry {@link PodLabels} (owner, engine, workspace or {@code pool}, created, and {@link PodLabels#TEMPLATE}:
 * a hash of the pod spec, so a pooled pod only goes to an engine with the same template) and an owner reference to the
 * Lease. The NetworkPolicy {@code codeexec-ws-<hash>} selects every pod of that template; engines with the same
 * template share it, and it outlives them (it holds no state; removing it while pods of the template run would open
 * them).
 *
 * <p>Threads: callers' threads create and delete workspaces concurrently (no lock: the workspace map is concurrent,
 * the API server serialises the rest). {@code codeexec-k8s-lease-<id>} renews the Lease every third of its duration,
 * checks the NetworkPolicy and sweeps every {@code sweepInterval}; {@code codeexec-k8s-pool-<id>} refills the pool.
 * Neither runs caller code; no lock is held over an API call.
 */
final class PodWorkspaces implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodWorkspaces.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
    private static final int NAME_ATTEMPTS = 5;

    /**
     * The engine's choices for its pods.
     *
     * @param readyTimeout  how long a new pod may take to become Ready (pulling the image counts)
     * @param poolSize      warm pods kept Ready for new workspaces; 0 for none
     * @param leaseDuration how long the engine's Lease is valid unrenewed; renewed every third of it
     * @param sweepInterval how often the sweeper runs on the housekeeping thread
     * @param leaseOwner    an owner for the engine's Lease (the application's Deployment or Pod, same namespace), so
     *                      deleting the application deletes the Lease and through it the pods; null for none
     * @param sweepAtStart  sweep leftovers of dead engines in the constructor, before any thread starts; a failed
     *                      sweep fails the constructor
     * @param acceptOtherPolicies  log a warning instead of failing when another NetworkPolicy opens the pods
     */
    record Settings(Duration readyTimeout, int poolSize, Duration leaseDuration, Duration sweepInterval,
                    OwnerReference leaseOwner, boolean sweepAtStart, boolean acceptOtherPolicies) {

        /**
         * Ready within 2 minutes, no pool, a 60-second Lease, a sweep every 5 minutes, no Lease owner, no sweep at
         * start, other NetworkPolicies that open the pods refused.
         */
        static Settings defaults() {
            return new Settings(Duration.ofMinutes(2), 0, Duration.ofSeconds(60), Duration.ofMinutes(5), null, false,
                    false);
        }

        Settings withPoolSize(int size) {
            return new Settings(readyTimeout, size, leaseDuration, sweepInterval, leaseOwner, sweepAtStart,
                    acceptOtherPolicies);
        }

        Settings withReadyTimeout(Duration timeout) {
            return new Settings(timeout, poolSize, leaseDuration, sweepInterval, leaseOwner, sweepAtStart,
                    acceptOtherPolicies);
        }

        Settings withLeaseOwner(OwnerReference owner) {
            return new Settings(readyTimeout, poolSize, leaseDuration, sweepInterval, owner, sweepAtStart,
                    acceptOtherPolicies);
        }

        Settings withSweepAtStart(boolean sweep) {
            return new Settings(readyTimeout, poolSize, leaseDuration, sweepInterval, leaseOwner, sweep,
                    acceptOtherPolicies);
        }

        Settings withAcceptOtherPolicies(boolean accept) {
            return new Settings(readyTimeout, poolSize, leaseDuration, sweepInterval, leaseOwner, sweepAtStart,
                    accept);
        }
    }

    final KubernetesClient client;
    final PodTemplate template;
    final String engineId;
    final String namespace;
    final String templateHash;
    final Settings settings;
    private final String apiServer;
    private final EngineLease lease;
    private final Map<String, String> podByWorkspace = new ConcurrentHashMap<>();
    private final ScheduledExecutorService housekeeping;
    private final PodPool pool;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final PodNetworkPolicy network;

    /**
     * Creates the engine's Lease and NetworkPolicy, checks the namespace's other NetworkPolicies, sweeps (when the
     * settings say so), and starts its threads. When any step fails, the Lease is deleted and no thread was started.
     *
     * @param engineId the engine instance: lower-case letters, digits and {@code -}, at most 40 characters
     * @throws BackendUnavailableException     when the API server is unreachable or refuses (named verb and resource)
     * @throws UnsupportedCapabilityException when another NetworkPolicy lets the pods out and the settings do not
     *                                         accept that
     */
    PodWorkspaces(KubernetesClient client, PodTemplate template, String engineId, Settings settings) {
        if (!engineId.matches("[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?")) {
            throw new IllegalArgumentException("engineId '" + engineId + "' must be lower-case letters, digits and "
                    + "'-', at most 40 characters");
        }
        this.client = client;
        this.template = template;
        this.engineId = engineId;
        this.settings = settings;
        this.namespace = template.namespace() != null ? template.namespace()
                : client.getNamespace() != null ? client.getNamespace() : "default";
        this.apiServer = String.valueOf(client.getMasterUrl());
        this.templateHash = hash(template);
        try {
            this.lease = new EngineLease(client, namespace, engineId, settings.leaseDuration(), settings.leaseOwner());
        } catch (KubernetesClientException e) {
            throw translate(e, "create", "leases");
        }
        this.network = new PodNetworkPolicy(this);
        try {
            network.ensure(true);
            network.requireClosed("");
            if (settings.sweepAtStart()) {
                sweep();
            }
        } catch (RuntimeException e) {
            deleteQuietly(lease::delete);
            throw e;
        }
        String shortId = engineId.substring(0, Math.min(8, engineId.length()));
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(daemon("codeexec-k8s-lease-" + shortId));
        long renew = Math.max(1000, settings.leaseDuration().toMillis() / 3);
        housekeeping.scheduleWithFixedDelay(this::renew, renew, renew, TimeUnit.MILLISECONDS);
        long sweep = Math.max(1000, settings.sweepInterval().toMillis());
        housekeeping.scheduleWithFixedDelay(this::sweepQuietly, sweep, sweep, TimeUnit.MILLISECONDS);
        this.pool = settings.poolSize() > 0 ? new PodPool(this, settings.poolSize(), shortId) : null;
    }

    static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            // Losing these threads with the JVM is safe: the Lease then expires, and the next sweep of any engine in
            // the namespace deletes it and what they looked after (or the garbage collector, with the Lease's owner).
            t.setDaemon(true);
            return t;
        };
    }

    /** A short hash of everything a pod of {@code t} and its NetworkPolicy contain. */
    static String hash(PodTemplate t) {
        Pod pod = PodSpecs.workspacePod(t, "x", Map.of(), List.of());
        NetworkPolicy policy = PodSpecs.workspacePolicy(t, "x", Map.of(), List.of());
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest((Serialization.asJson(pod) + "\n"
                    + Serialization.asJson(policy)).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The NetworkPolicy's name for this template. */
    String policyName() {
        return "codeexec-ws-" + templateHash;
    }

    /** The labels every pod of this template has, whatever engine made it: the NetworkPolicy selects on them. */
    Map<String, String> templateSelector() {
        return Map.of(PodLabels.OWNER, PodLabels.OWNER_VALUE, PodLabels.TEMPLATE, templateHash);
    }

    /** Checks the NetworkPolicies now, as each Lease renewal does (for tests and diagnostics). */
    void checkPolicies() {
        network.ensure(false);
    }

    /**
     * Whether another NetworkPolicy of the namespace lets the pods out, as last checked (at the start and at each
     * Lease renewal): the policies, or empty.
     */
    Optional<String> openedBy() {
        return network.openedBy();
    }

    BackendUnavailableException translate(KubernetesClientException e, String verb, String resource) {
        var t = PodFailures.translate(e, verb, resource, namespace, apiServer);
        return t instanceof BackendUnavailableException b ? b : new BackendUnavailableException(t.getMessage(), e);
    }

    // ------------------------------------------------------------------ workspaces

    /**
     * A Ready pod for a new workspace: a pooled one when one is free, a new one otherwise.
     *
     * @param workspaceId the workspace's id (its label value is derived from it)
     * @return the pod's name
     * @throws BackendUnavailableException when no pod could be made Ready: the image could not be pulled, the pod
     *                                     cannot be scheduled, RBAC or a quota refused, the API server is unreachable
     */
    String create(String workspaceId) {
        requireOpen();
        network.requireClosed("; refusing to create a workspace");
        String label = PodLabels.value(workspaceId);
        Optional<String> pooled = pool == null ? Optional.empty() : pool.adopt(label);
        String name = pooled.orElseGet(() -> awaitReady(createPod(label)).getMetadata().getName());
        podByWorkspace.put(workspaceId, name);
        if (closed.get()) { // close() ran meanwhile and may have missed this pod
            delete(workspaceId);
            requireOpen();
        }
        LOG.debug("workspace {} in pod {}{}", workspaceId, name, pooled.isPresent() ? " (warm)" : "");
        return name;
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new WorkspaceGoneException("the engine is closed");
        }
    }

    /**
     * The pod of a live workspace of this engine.
     *
     * @throws WorkspaceGoneException when the workspace is not one of this engine's
     */
    String pod(String workspaceId) {
        String name = podByWorkspace.get(workspaceId);
        if (name == null) {
            throw new WorkspaceGoneException("workspace '" + workspaceId + "' is not a live workspace of this engine");
        }
        return name;
    }

    /**
     * Why a workspace's pod can no longer run anything, for an exec that failed: deleted (404), evicted, OOM-killed,
     * past its deadline. Empty when the pod looks alive (the failure was the connection's, not the pod's).
     *
     * @throws BackendUnavailableException when the API server cannot be asked
     */
    Optional<WorkspaceGoneException> whyGone(String workspaceId) {
        String name = pod(workspaceId);
        Pod p;
        try {
            p = client.pods().inNamespace(namespace).withName(name).get();
        } catch (KubernetesClientException e) {
            throw translate(e, "get", "pods");
        }
        return PodFailures.goneReason(p).map(reason -> new WorkspaceGoneException("the pod " + name + " of workspace '"
                + workspaceId + "' is gone with its files: " + reason));
    }

    /** Throws the reason a workspace's pod is gone, if it is. */
    void requireAlive(String workspaceId) {
        Optional<WorkspaceGoneException> gone = whyGone(workspaceId);
        if (gone.isPresent()) {
            throw gone.get();
        }
    }

    /** Deletes a workspace's pod; a pod already gone is fine. */
    void delete(String workspaceId) {
        String name = podByWorkspace.remove(workspaceId);
        if (name != null) {
            try {
                client.pods().inNamespace(namespace).withName(name).delete();
            } catch (KubernetesClientException e) {
                throw translate(e, "delete", "pods");
            }
        }
    }

    /** The workspaces and their pods, for diagnostics and tests. */
    Map<String, String> pods() {
        return Map.copyOf(podByWorkspace);
    }

    EngineLease lease() {
        return lease;
    }

    // ------------------------------------------------------------------ pods

    /**
     * Creates a pod of this engine (not yet Ready), under a fresh random name; a name taken (409) is replaced.
     *
     * @param workspaceLabel the workspace label value, or {@link PodLabels#POOL}
     */
    Pod createPod(String workspaceLabel) {
        Map<String, String> labels = PodLabels.of(engineId, workspaceLabel, System.currentTimeMillis());
        labels.put(PodLabels.TEMPLATE, templateHash);
        KubernetesClientException last = null;
        for (int attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
            String name = "codeexec-" + randomSuffix();
            Pod pod = new PodBuilder(PodSpecs.workspacePod(template, name, labels, List.of(lease.ownerReference())))
                    .editMetadata().withNamespace(namespace).addToAnnotations(PodLabels.creator()).endMetadata()
                    .build();
            try {
                return client.pods().inNamespace(namespace).resource(pod).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw translate(e, "create", "pods");
                }
                last = e;
            }
        }
        throw new BackendUnavailableException("could not create a workspace pod in namespace '" + namespace + "': "
                + NAME_ATTEMPTS + " random names were all taken (409 Conflict)", last);
    }

    private static String randomSuffix() {
        StringBuilder s = new StringBuilder(10);
        for (int i = 0; i < 10; i++) {
            s.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        return s.toString();
    }

    /**
     * Waits until a new pod is Ready; a pod that cannot become Ready (image pull failure, container error, failed,
     * not Ready in time: unschedulable, say) is deleted, and the reason thrown.
     */
    Pod awaitReady(Pod created) {
        String name = created.getMetadata().getName();
        PodResource resource = client.pods().inNamespace(namespace).withName(name);
        AtomicReference<Pod> seen = new AtomicReference<>(created);
        AtomicBoolean deleted = new AtomicBoolean();
        boolean timedOut = false;
        try {
            resource.waitUntilCondition(p -> {
                if (p == null) {
                    deleted.set(true);
                    return true;
                }
                seen.set(p);
                return PodFailures.ready(p) || PodFailures.startFailure(p, template.image()).isPresent();
            }, settings.readyTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (KubernetesClientException e) {
            if (e.getCode() > 0 || e.getCause() instanceof java.io.IOException) {
                deleteQuietly(resource::delete);
                throw translate(e, "watch", "pods");
            }
            timedOut = true;
        } catch (IllegalStateException e) {
            timedOut = true;
        }
        Pod p = seen.get();
        if (deleted.get()) {
            throw new BackendUnavailableException("the workspace pod " + name + " in namespace '" + namespace
                    + "' was deleted while it started");
        }
        if (!timedOut && PodFailures.ready(p)) {
            return p;
        }
        String why = PodFailures.startFailure(p, template.image()).orElseGet(() -> "not Ready within "
                + settings.readyTimeout().toSeconds() + " s: " + PodFailures.pending(p));
        deleteQuietly(resource::delete);
        throw new BackendUnavailableException("the workspace pod " + name + " in namespace '" + namespace
                + "' did not start: " + why);
    }

    private static void deleteQuietly(Runnable delete) {
        try {
            delete.run();
        } catch (RuntimeException e) {
            LOG.warn("could not delete after a failure: {}", e.getMessage());
        }
    }

    // ------------------------------------------------------------------ housekeeping

    private void renew() {
        try {
            lease.renew();
        } catch (RuntimeException e) {
            LOG.warn("could not renew the engine's Lease {} in namespace {}: {}", EngineLease.name(engineId),
                    namespace, e.getMessage());
        }
        try {
            network.ensure(false);
        } catch (RuntimeException e) {
            LOG.warn("could not check the NetworkPolicies in namespace {}: {}", namespace, e.getMessage());
        }
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.warn("the sweep of leftover workspace pods failed: {}", e.getMessage());
        }
    }

    /**
     * Deletes what dead engines left in the namespace ({@link PodSweeper}).
     *
     * @return how many pods were deleted
     */
    int sweep() {
        return new PodSweeper(this).sweep();
    }

    /**
     * Stops renewing, deletes every pod of this engine (its workspaces' and its pool's) and its Lease. Idempotent.
     *
     * @throws BackendUnavailableException when some could not be deleted (the rest were); the Lease then expires and
     *                                     the cluster or another engine's sweeper deletes what is left
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (pool != null) {
            pool.close();
        }
        housekeeping.shutdownNow();
        try {
            housekeeping.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RuntimeException failure = null;
        podByWorkspace.clear();
        try {
            PodSweeper sweeper = new PodSweeper(this);
            for (Pod p : client.pods().inNamespace(namespace).withLabels(PodLabels.engine(engineId))
                    .withLabel(PodLabels.TEMPLATE).list().getItems()) {
                sweeper.deletePod(p);
            }
        } catch (KubernetesClientException e) {
            failure = translate(e, "delete", "pods");
        }
        try {
            lease.delete();
        } catch (KubernetesClientException e) {
            RuntimeException f = translate(e, "delete", "leases");
            if (failure == null) {
                failure = f;
            } else {
                failure.addSuppressed(f);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** The warm pool, or null without one. */
    PodPool pool() {
        return pool;
    }

    boolean closed() {
        return closed.get();
    }
}
