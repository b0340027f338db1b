package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.spi.IoThreads;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The wait for one {@code SandboxClaim} to be settled by the agent-sandbox controller: Ready, refused for a reason
 * waiting will not clear, or deleted. It watches the claim (an informer) and also reads it every {@link #RECHECK}, so a
 * missed watch event cannot hold a claim for the whole ready timeout. Used on the claiming thread only; an interrupt
 * ends the wait with {@link BackendUnavailableException} and the flag kept.
 */
final class ClaimWait {

    /**
     * {@code Ready=False} reasons that waiting will not clear (from the v1beta1 controllers): the claim is refused.
     * Others ({@code SandboxNotReady}, {@code DependenciesNotReady}, {@code SandboxCreatePending},
     * {@code AdoptionConflict}, {@code SandboxMissing}, {@code ReconcilerError}) are the controller still working.
     */
    static final Set<String> TERMINAL_REASONS = Set.of("WarmPoolNotFound", "TemplateNotFound", "InvalidMetadata",
            "EnvVarsInjectionRejected", "VolumeClaimTemplatesError", "ClaimExpired", "SandboxExpired", "PodSucceeded",
            "PodFailed", "SandboxSuspended");

    /** How often a wait for a claim reads the claim itself besides watching it. */
    static final Duration RECHECK = Duration.ofSeconds(5);

    private final SandboxClaims claims;
    private final SandboxClaimSettings settings;

    ClaimWait(SandboxClaims claims, SandboxClaimSettings settings) {
        this.claims = claims;
        this.settings = settings;
    }

    /** Whether a claim (null: deleted) is settled: gone, Ready, or refused for a reason that will not pass. */
    private static boolean decided(GenericKubernetesResource claim) {
        if (claim == null) {
            return true;
        }
        Map<String, Object> ready = readyCondition(claim);
        return ready != null && ("True".equals(ready.get("status"))
                || "False".equals(ready.get("status")) && TERMINAL_REASONS.contains(ready.get("reason")));
    }

    /**
     * Waits for the watch's verdict, and reads the claim itself every {@link #RECHECK}: a watch can miss an event (a
     * deletion between its list and its watch, a connection dropped and resumed), and the claim as stored decides
     * then. Returns the watch's items: empty when the claim is gone.
     */
    private List<GenericKubernetesResource> awaitDecision(CompletableFuture<List<GenericKubernetesResource>> done,
            String name, AtomicReference<GenericKubernetesResource> last)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + settings.readyTimeout().toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException();
            }
            try {
                return done.get(Math.min(left, RECHECK.toNanos()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                GenericKubernetesResource stored;
                try {
                    stored = claims.claims().withName(name).get();
                } catch (KubernetesClientException k) {
                    throw claims.translate(k, "reading SandboxClaim " + name);
                }
                if (decided(stored)) {
                    return stored == null ? List.of() : List.of(stored);
                }
                last.set(stored);
            }
        }
    }

    /**
     * Waits on the claim's informer for {@code Ready=True}; refuses on a terminal reason or when the claim is gone.
     * The informer's condition sees the list of matching objects (the initial list included), so a claim deleted
     * before the informer started shows as an empty list rather than as silence until the timeout.
     */
    GenericKubernetesResource awaitReady(String name, String uid) {
        AtomicReference<GenericKubernetesResource> last = new AtomicReference<>();
        // The informer starts on another thread: its start waits for the first list, and an interrupt landing in
        // fabric8's wait there can be lost; the caller's interrupt must land in a wait of ours.
        CompletableFuture<CompletableFuture<List<GenericKubernetesResource>>> watching = CompletableFuture.supplyAsync(
                () -> claims.claims().withName(name).informOnCondition(items -> {
                    GenericKubernetesResource claim = items.isEmpty() ? null : items.get(0);
                    last.set(claim);
                    return decided(claim);
                }), IoThreads.IO);
        CompletableFuture<List<GenericKubernetesResource>> done;
        try {
            done = watching.get();
        } catch (InterruptedException e) {
            watching.thenAccept(informer -> informer.cancel(true)); // stopped once it started
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted while waiting for SandboxClaim " + name, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof KubernetesClientException k ? claims.translate(k, "watching SandboxClaim "
                    + name) : new BackendUnavailableException("watching SandboxClaim " + name + " failed: "
                    + e.getCause(), e);
        }
        List<GenericKubernetesResource> seen;
        try {
            seen = awaitDecision(done, name, last);
        } catch (TimeoutException e) {
            throw new BackendUnavailableException("SandboxClaim " + name + " was not ready within "
                    + settings.readyTimeout() + " (warm pool " + settings.warmPoolName() + "; last Ready condition: "
                    + describe(last.get() == null ? null : readyCondition(last.get())) + claims.podDiagnosis(uid)
                    + "); is the agent-sandbox controller running and the pool able to schedule pods?", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted while waiting for SandboxClaim " + name, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof KubernetesClientException k ? claims.translate(k, "watching SandboxClaim " + name)
                    : new BackendUnavailableException("watching SandboxClaim " + name + " failed: " + e.getCause(), e);
        } finally {
            done.cancel(true); // stops the informer; a no-op once it completed
        }
        if (seen.isEmpty()) {
            throw new SandboxClaimRefusedException(name, "ClaimDeleted", "the claim was deleted while waiting for it");
        }
        Map<String, Object> ready = readyCondition(seen.get(0));
        if (!"True".equals(ready.get("status"))) {
            throw new SandboxClaimRefusedException(name, String.valueOf(ready.get("reason")),
                    (String) ready.get("message"));
        }
        return seen.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> readyCondition(GenericKubernetesResource claim) {
        List<Map<String, Object>> conditions = claim.get("status", "conditions");
        if (conditions == null) {
            return null;
        }
        return conditions.stream().filter(c -> "Ready".equals(c.get("type"))).findFirst().orElse(null);
    }

    private static String describe(Map<String, Object> condition) {
        return condition == null ? "none observed"
                : condition.get("status") + " " + condition.get("reason") + " " + condition.get("message");
    }
}
