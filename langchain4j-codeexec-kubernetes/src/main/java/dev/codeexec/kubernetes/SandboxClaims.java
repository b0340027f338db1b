package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

import java.net.HttpURLConnection;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Workspaces as agent-sandbox pods: a {@code SandboxClaim} against the configured {@code SandboxWarmPool}, the
 * controller's handshake followed to the pod, and the claim deleted to release it. There is no typed model for these
 * CRDs, so every object is a fabric8 {@link GenericKubernetesResource} addressed by an explicit group, version and
 * plural (no discovery round trip, and a missing CRD shows as a plain 404).
 *
 * <p>The handshake, as the controller (agent-sandbox v0.5, API v1beta1) performs it: it adopts a warm
 * {@code Sandbox} (or creates one from the pool's template), labels the sandbox's pod
 * {@value #CLAIM_UID_LABEL}{@code =<claim uid>}, annotates the {@code Sandbox} with {@value #POD_NAME_ANNOTATION}
 * when the pod's name differs from the sandbox's, writes {@code status.sandbox.name} on the claim and mirrors the
 * sandbox's {@code Ready} condition onto it. {@link #claim} waits for {@code Ready=True} only: a
 * {@code Ready=False} with a reason in {@link #TERMINAL_REASONS} ends the wait with a
 * {@link SandboxClaimRefusedException}, any other reason is treated as progress until the timeout.
 *
 * <p>Fails closed on the pod: the operator's template decides its security settings, so {@link #claim} reads the pod
 * and, unless the settings accept the template as is, refuses one that lacks any of {@link PodHardening} (and
 * releases the claim). The network is part of that: before the pod is used, {@link ClaimNetwork} labels it into the
 * engine's deny-all NetworkPolicy and checks that no other policy lets traffic through. A pod carrying another
 * claim's uid label is refused in every case.
 *
 * <p>Threads: none of its own; every method blocks its caller. While {@link #claim} waits, a fabric8 informer (its
 * own threads) evaluates the claim's condition and completes a future the caller waits on; the informer is stopped
 * when the wait ends, however it ends. No locks: stateless apart from its configuration, so concurrent calls are
 * safe.
 */
final class SandboxClaims {

    /** The group of {@code Sandbox}. */
    static final String CORE_GROUP = "agents.x-k8s.io";
    /** The group of {@code SandboxClaim}, {@code SandboxTemplate} and {@code SandboxWarmPool}. */
    static final String EXTENSIONS_GROUP = "extensions.agents.x-k8s.io";
    /** The label the controller puts on the claimed pod: the claim's uid. */
    static final String CLAIM_UID_LABEL = "agents.x-k8s.io/claim-uid";
    /** The annotation on a {@code Sandbox} naming its pod when it was adopted from a warm pool. */
    static final String POD_NAME_ANNOTATION = "agents.x-k8s.io/pod-name";
    /** The annotation naming a pod's default container ({@code kubectl exec} uses it too). */
    static final String DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container";
    /** What the message of a 404 on the claim list says. */
    static final String NOT_INSTALLED = "agent-sandbox CRDs not installed in this cluster";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

    private final KubernetesClient client;
    private final String namespace;
    private final SandboxClaimSettings settings;
    private final Clock clock;
    private final ClaimNetwork network;

    /**
     * @param client    the engine's client; not closed here
     * @param namespace the namespace of the warm pool, where claims are created
     * @param settings  the warm pool, version, wait and strictness
     * @param clock     the clock {@code lifecycle.shutdownTime} is computed from
     */
    SandboxClaims(KubernetesClient client, String namespace, SandboxClaimSettings settings, Clock clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.network = new ClaimNetwork(client, namespace);
    }

    /** The network fence of the claimed pods; the engine creates its policy when it is built. */
    ClaimNetwork network() {
        return network;
    }

    /**
     * Checks that the cluster serves {@code SandboxClaim} in the namespace (one list call, limit 1); the engine calls
     * it once when it is built. A 404 means the CRDs (or this version of them) are not installed.
     *
     * @throws UnsupportedCapabilityException when the CRDs are not installed: "{@value #NOT_INSTALLED}"
     * @throws BackendUnavailableException    when the API server refuses or cannot be reached
     */
    void requireInstalled() {
        try {
            claims().list(new ListOptionsBuilder().withLimit(1L).build());
        } catch (KubernetesClientException e) {
            throw translate(e, "listing SandboxClaims");
        }
    }

    /**
     * Claims a pod for one workspace: creates the claim, waits for it to be ready, finds its pod and checks it. On any
     * failure the claim is deleted before the exception leaves, so nothing is left behind.
     *
     * @param labels labels for the claim (the engine id and the workspace id), so a sweeper can find it
     * @param owners owner references for the claim (the engine's Lease), so the cluster deletes it with its owner
     * @return the pod and container to exec into, and what hardening it lacks
     * @throws SandboxClaimRefusedException   the controller refused the claim (reason and message inside)
     * @throws PolicyViolationException       the pod lacks hardened settings and the template is not accepted as
     *                                        is, or the pod belongs to another claim
     * @throws UnsupportedCapabilityException the CRDs are not installed
     * @throws BackendUnavailableException    timeout, forbidden, or the sandbox or pod could not be found
     */
    ClaimedSandbox claim(Map<String, String> labels, List<OwnerReference> owners) {
        // The name is chosen here, not by the server, so that a create whose answer is lost (an interrupt, a dropped
        // connection) can still be cleaned up: the claim may exist although the call failed. Not after a 409: that
        // claim, if any, is someone else's.
        String name = newClaimName();
        String uid;
        try {
            uid = claims().resource(claimObject(name, labels, owners)).create().getMetadata().getUid();
        } catch (KubernetesClientException e) {
            RuntimeException failure = translate(e, "creating SandboxClaim " + name);
            if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
                releaseAfterFailure(name, failure);
            }
            throw failure;
        } catch (RuntimeException e) {
            releaseAfterFailure(name, e);
            throw e;
        }
        try {
            return inspect(new ClaimWait(this, settings).awaitReady(name, uid));
        } catch (RuntimeException e) {
            releaseAfterFailure(name, e);
            throw e;
        }
    }

    /**
     * Deletes a claim after a failed {@link #claim}, with the caller's interrupt flag cleared for the one call (an
     * interrupted thread cannot make HTTP calls, and the claim would live until its lifetime ends) and then restored.
     */
    private void releaseAfterFailure(String name, RuntimeException failure) {
        boolean interrupted = Thread.interrupted();
        try {
            release(name);
        } catch (RuntimeException suppressed) {
            failure.addSuppressed(suppressed);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Releases a claimed pod by deleting its claim; the controller deletes the sandbox and the pod. Idempotent: a claim
     * already gone is not an error.
     *
     * @throws BackendUnavailableException when the API server refuses the deletion
     */
    void release(String claimName) {
        try {
            claims().withName(claimName).delete();
        } catch (KubernetesClientException e) {
            if (e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
                throw translate(e, "deleting SandboxClaim " + claimName);
            }
        }
    }

    /**
     * The claim object {@link #claim} creates, as a pure function: {@code spec.warmPoolRef.name} the configured
     * pool; {@code spec.lifecycle} only when a lifetime or a TTL is configured, then with
     * {@code shutdownPolicy: Delete} so that an expired claim takes its sandbox with it.
     */
    GenericKubernetesResource claimObject(String name, Map<String, String> labels, List<OwnerReference> owners) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("warmPoolRef", Map.of("name", settings.warmPoolName()));
        Map<String, Object> lifecycle = new LinkedHashMap<>();
        if (settings.maxLifetime() != null) {
            lifecycle.put("shutdownTime", DateTimeFormatter.ISO_INSTANT.format(
                    clock.instant().plus(settings.maxLifetime()).truncatedTo(ChronoUnit.SECONDS)));
        }
        if (settings.ttlSecondsAfterFinished() != null) {
            lifecycle.put("ttlSecondsAfterFinished", settings.ttlSecondsAfterFinished());
        }
        if (!lifecycle.isEmpty()) {
            lifecycle.put("shutdownPolicy", "Delete");
            spec.put("lifecycle", lifecycle);
        }
        GenericKubernetesResource claim = new GenericKubernetesResource();
        claim.setApiVersion(settings.extensionsApiVersion());
        claim.setKind("SandboxClaim");
        claim.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace)
                .withLabels(new LinkedHashMap<>(labels)).withOwnerReferences(owners).build());
        claim.setAdditionalProperty("spec", spec);
        return claim;
    }

    /**
     * Why the claim's pod, if it has one yet, is not ready, for a timeout's message: an unschedulable pod, a waiting
     * container ({@code ImagePullBackOff}, {@code CrashLoopBackOff}) or a terminated one. Best effort: empty when
     * there is no pod or it cannot be read. Package-private so that the diagnosis can be tested without a timeout.
     */
    String podDiagnosis(String uid) {
        if (uid == null) {
            return "";
        }
        try {
            List<String> found = new ArrayList<>();
            for (Pod pod : client.pods().inNamespace(namespace).withLabel(CLAIM_UID_LABEL, uid).list().getItems()) {
                PodStatus status = pod.getStatus();
                if (status == null) {
                    continue;
                }
                String where = "pod " + pod.getMetadata().getName();
                for (PodCondition condition : status.getConditions()) {
                    if ("PodScheduled".equals(condition.getType()) && "False".equals(condition.getStatus())) {
                        found.add(where + " not scheduled: " + condition.getReason() + " " + condition.getMessage());
                    }
                }
                for (ContainerStatus container : status.getContainerStatuses()) {
                    ContainerState state = container.getState();
                    if (state != null && state.getWaiting() != null) {
                        found.add(where + " container " + container.getName() + " waiting: "
                                + state.getWaiting().getReason() + " " + state.getWaiting().getMessage());
                    } else if (state != null && state.getTerminated() != null) {
                        found.add(where + " container " + container.getName() + " terminated: "
                                + state.getTerminated().getReason() + " exit " + state.getTerminated().getExitCode());
                    }
                }
            }
            return found.isEmpty() ? "" : "; " + String.join("; ", found);
        } catch (KubernetesClientException e) {
            return "";
        }
    }

    /** Follows a ready claim to its pod and container, and checks the pod's security settings. */
    private ClaimedSandbox inspect(GenericKubernetesResource claim) {
        String claimName = claim.getMetadata().getName();
        String uid = claim.getMetadata().getUid();
        String sandboxName = claim.get("status", "sandbox", "name");
        if (sandboxName == null || sandboxName.isBlank()) {
            throw new BackendUnavailableException("SandboxClaim " + claimName
                    + " is Ready but names no sandbox in status.sandbox.name; is the controller's version "
                    + settings.apiVersion() + "?");
        }
        Pod pod;
        try {
            GenericKubernetesResource sandbox = resources("Sandbox", "sandboxes", settings.coreApiVersion())
                    .withName(sandboxName).get();
            if (sandbox == null) {
                throw new BackendUnavailableException("Sandbox " + sandboxName + " of SandboxClaim " + claimName
                        + " is gone");
            }
            pod = findPod(claimName, uid, sandbox);
        } catch (KubernetesClientException e) {
            throw translate(e, "reading the sandbox of SandboxClaim " + claimName);
        }
        String owner = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(CLAIM_UID_LABEL);
        if (owner != null && !owner.equals(uid)) {
            throw new PolicyViolationException("pod " + pod.getMetadata().getName() + " of Sandbox " + sandboxName
                    + " is labelled for another claim (" + CLAIM_UID_LABEL + "=" + owner + ", expected " + uid
                    + "); refusing to use it");
        }
        String container = container(pod);
        Map<PodHardening, List<String>> missing = new LinkedHashMap<>(missingHardening(pod));
        refuseUnlessAccepted(pod, missing);
        List<String> open;
        try {
            open = network.fence(pod, claimName); // before the pod is used: labelled into the deny-all policy
        } catch (KubernetesClientException e) {
            throw translate(e, "fencing pod " + pod.getMetadata().getName() + " of SandboxClaim " + claimName);
        }
        if (!open.isEmpty()) {
            missing.put(PodHardening.NETWORK_DENIED, List.copyOf(open));
            refuseUnlessAccepted(pod, missing);
        }
        return new ClaimedSandbox(claimName, uid, sandboxName, pod.getMetadata().getName(),
                pod.getMetadata().getUid(), container, missing);
    }

    private void refuseUnlessAccepted(Pod pod, Map<PodHardening, List<String>> missing) {
        if (!missing.isEmpty() && !settings.acceptTemplateAsIs()) {
            throw new PolicyViolationException("pod " + pod.getMetadata().getName() + " from warm pool "
                    + settings.warmPoolName() + " lacks hardened settings the engine requires: "
                    + PodHardening.describe(missing) + ". Harden the pool's SandboxTemplate, or accept the template"
                    + " as is in the engine's builder");
        }
    }

    /**
     * Reads a pod of the namespace ({@link KubernetesWorkspaces#whyGone} asks it of a claimed pod); null when gone.
     *
     * @throws BackendUnavailableException when the API server cannot be asked
     */
    Pod readPod(String name) {
        try {
            return client.pods().inNamespace(namespace).withName(name).get();
        } catch (KubernetesClientException e) {
            throw translate(e, "reading pod " + name);
        }
    }

    /**
     * The engine's hardened settings that {@code pod}'s spec lacks, each with where; what {@link #claim} refuses on
     * (with {@link PodHardening#NETWORK_DENIED}, which the spec cannot show).
     */
    Map<PodHardening, List<String>> missingHardening(Pod pod) {
        return PodHardening.missingFrom(pod.getSpec(), pod.getMetadata().getAnnotations(), settings.runtimeClassName());
    }

    /** The annotation on the Sandbox; else the one pod labelled with the claim's uid; else the pod named like the sandbox. */
    private Pod findPod(String claimName, String uid, GenericKubernetesResource sandbox) {
        String sandboxName = sandbox.getMetadata().getName();
        Map<String, String> annotations = sandbox.getMetadata().getAnnotations();
        String annotated = annotations == null ? null : annotations.get(POD_NAME_ANNOTATION);
        if (annotated != null && !annotated.isBlank()) {
            return required(client.pods().inNamespace(namespace).withName(annotated).get(), annotated, sandboxName);
        }
        List<Pod> labelled = uid == null ? List.of()
                : client.pods().inNamespace(namespace).withLabel(CLAIM_UID_LABEL, uid).list().getItems();
        if (labelled.size() > 1) {
            throw new BackendUnavailableException(labelled.size() + " pods carry " + CLAIM_UID_LABEL + "=" + uid
                    + " for SandboxClaim " + claimName + "; expected one");
        }
        if (labelled.size() == 1) {
            return labelled.get(0);
        }
        return required(client.pods().inNamespace(namespace).withName(sandboxName).get(), sandboxName, sandboxName);
    }

    private static Pod required(Pod pod, String podName, String sandboxName) {
        if (pod == null) {
            throw new BackendUnavailableException("pod " + podName + " of Sandbox " + sandboxName + " is gone");
        }
        return pod;
    }

    /** The configured container, else the pod's default-container annotation, else its first container. */
    private String container(Pod pod) {
        List<Container> containers = pod.getSpec().getContainers();
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String wanted = settings.containerName() != null ? settings.containerName()
                : annotations != null && annotations.get(DEFAULT_CONTAINER_ANNOTATION) != null
                ? annotations.get(DEFAULT_CONTAINER_ANNOTATION) : containers.isEmpty() ? null : containers.get(0).getName();
        if (wanted == null || containers.stream().noneMatch(c -> wanted.equals(c.getName()))) {
            throw new BackendUnavailableException("pod " + pod.getMetadata().getName() + " has no container "
                    + wanted + " (it has " + containers.stream().map(Container::getName).toList() + ")");
        }
        return wanted;
    }

    RuntimeException translate(KubernetesClientException e, String what) {
        int code = e.getCode();
        if (code == HttpURLConnection.HTTP_NOT_FOUND && e.getStatus() != null && e.getStatus().getDetails() != null
                && "namespaces".equals(e.getStatus().getDetails().getKind())) {
            return new BackendUnavailableException(what + ": namespace " + namespace + " does not exist", e);
        }
        if (code == HttpURLConnection.HTTP_NOT_FOUND) {
            return new UnsupportedCapabilityException(NOT_INSTALLED + " (" + what + " in namespace " + namespace
                    + " got 404 for " + settings.extensionsApiVersion() + " sandboxclaims; install the release's "
                    + "sandbox-with-extensions.yaml, or set the API version the cluster serves)", e);
        }
        if (code == HttpURLConnection.HTTP_FORBIDDEN) {
            return new BackendUnavailableException(what + " in namespace " + namespace + " was forbidden: the engine's"
                    + " account needs create, get, list, watch and delete on sandboxclaims, get on sandboxes, get, list"
                    + " and patch on pods, create on pods/exec, get, list, create and patch on networkpolicies, and"
                    + " create, get, list, patch and delete on leases", e);
        }
        return new BackendUnavailableException(what + " in namespace " + namespace + " failed"
                + (code > 0 ? " with HTTP " + code : "") + ": " + e.getMessage(), e);
    }

    /** The namespace's {@code SandboxClaim}s, for this class and the sweeper ({@link ClaimKeeper}). */
    NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> claims() {
        return resources("SandboxClaim", "sandboxclaims", settings.extensionsApiVersion());
    }

    private NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> resources(
            String kind, String plural, String apiVersion) {
        int slash = apiVersion.indexOf('/');
        ResourceDefinitionContext context = new ResourceDefinitionContext.Builder()
                .withGroup(apiVersion.substring(0, slash)).withVersion(apiVersion.substring(slash + 1))
                .withKind(kind).withPlural(plural).withNamespaced(true).build();
        return client.genericKubernetesResources(context).inNamespace(namespace);
    }

    /** {@code codeexec-} and 10 random characters: claims are per workspace, and workspace ids need not be DNS names. */
    private static String newClaimName() {
        StringBuilder name = new StringBuilder("codeexec-");
        for (int i = 0; i < 10; i++) {
            name.append(NAME_ALPHABET.charAt(RANDOM.nextInt(NAME_ALPHABET.length())));
        }
        return name.toString();
    }
}
