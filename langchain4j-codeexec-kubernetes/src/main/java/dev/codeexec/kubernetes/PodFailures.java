package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads what went wrong with a workspace pod: the API server's refusals turned into this library's exceptions, and a
 * pod's status turned into a sentence. One place, so that every caller says the same thing for the same failure, and
 * so that the table of cases can be tested without a cluster.
 */
final class PodFailures {

    private PodFailures() {
    }

    /** Waiting reasons of a container that will not start without someone fixing something. */
    private static final Set<String> IMAGE_FAILURES = Set.of("ErrImagePull", "ImagePullBackOff", "InvalidImageName",
            "ErrImageNeverPull", "RegistryUnavailable");
    private static final Set<String> CONFIG_FAILURES = Set.of("CreateContainerConfigError", "CreateContainerError",
            "RunContainerError", "CrashLoopBackOff");

    /**
     * The exception for a failed API call.
     *
     * @param e         what the client threw
     * @param verb      the verb, as RBAC names it ({@code create}, {@code list}, ...)
     * @param resource  the resource, as RBAC names it ({@code pods}, {@code leases}, ...)
     * @param namespace the namespace of the call
     * @param apiServer the API server's URL, for "unreachable"
     */
    static CodeExecException translate(KubernetesClientException e, String verb, String resource, String namespace,
                                       String apiServer) {
        String what = verb + " " + resource + " in namespace '" + namespace + "'";
        String said = serverMessage(e);
        return switch (e.getCode()) {
            case 401 -> new BackendUnavailableException("the Kubernetes API server at " + apiServer + " refused the "
                    + "engine's credentials (401 Unauthorized) to " + what + ": check the kubeconfig or service "
                    + "account token", e);
            case 403 -> said.contains("exceeded quota")
                    ? new BackendUnavailableException("the namespace '" + namespace + "' has no quota left to " + what
                    + " (a ResourceQuota is used up: close workspaces, or ask an operator to raise it): " + said, e)
                    : new BackendUnavailableException("forbidden: the engine may not " + what + " (RBAC must allow "
                    + "verb '" + verb + "' on '" + resource + "' there): " + said, e);
            case 404 -> new BackendUnavailableException("cannot " + what + ": not found (does the namespace exist?): "
                    + said, e);
            case 409 -> new BackendUnavailableException("cannot " + what + ": conflict: " + said, e);
            case 422, 400 -> new InvalidSpecException("the API server refused to " + what + " as invalid (check the "
                    + "PodTemplate): " + said, e);
            default -> unreachable(e)
                    ? new BackendUnavailableException("the Kubernetes API server at " + apiServer + " is unreachable ("
                    + rootMessage(e) + "); could not " + what, e)
                    : new BackendUnavailableException("could not " + what + " (HTTP " + e.getCode() + "): " + said, e);
        };
    }

    /** The API server's own message, or the client's. */
    static String serverMessage(KubernetesClientException e) {
        if (e.getStatus() != null && e.getStatus().getMessage() != null) {
            return e.getStatus().getMessage();
        }
        return String.valueOf(e.getMessage());
    }

    private static boolean unreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    /** Whether the pod's Ready condition is True. */
    static boolean ready(Pod pod) {
        return pod != null && pod.getStatus() != null && pod.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /**
     * Why a pod that is starting will never become Ready unless someone acts (the image cannot be pulled, the
     * container cannot be created, the pod failed), or empty while it may still come up.
     */
    static Optional<String> startFailure(Pod pod, String image) {
        Optional<String> gone = goneReason(pod);
        if (gone.isPresent()) {
            return gone;
        }
        for (ContainerStatus cs : containerStatuses(pod)) {
            ContainerStateWaiting w = cs.getState() == null ? null : cs.getState().getWaiting();
            if (w == null || w.getReason() == null) {
                continue;
            }
            if (IMAGE_FAILURES.contains(w.getReason())) {
                return Optional.of("the cluster could not pull image '" + image + "' (" + w.getReason()
                        + (w.getMessage() == null ? "" : ": " + w.getMessage()) + "); the engine never pulls: "
                        + "check the image name, the registry and imagePullSecrets");
            }
            if (CONFIG_FAILURES.contains(w.getReason())) {
                return Optional.of("the container could not start (" + w.getReason()
                        + (w.getMessage() == null ? "" : ": " + w.getMessage()) + ")");
            }
        }
        return Optional.empty();
    }

    /** What keeps a pending pod from running, for the message of a pod that did not become Ready in time. */
    static String pending(Pod pod) {
        if (pod == null || pod.getStatus() == null) {
            return "no status reported yet";
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("PodScheduled".equals(c.getType()) && "False".equals(c.getStatus())) {
                return "Unschedulable".equals(c.getReason())
                        ? "the pod cannot be scheduled on any node (Unschedulable: " + c.getMessage() + ")"
                        : "not scheduled yet (" + c.getReason() + ": " + c.getMessage() + ")";
            }
        }
        for (ContainerStatus cs : containerStatuses(pod)) {
            ContainerStateWaiting w = cs.getState() == null ? null : cs.getState().getWaiting();
            if (w != null && w.getReason() != null) {
                return "container waiting (" + w.getReason() + (w.getMessage() == null ? "" : ": " + w.getMessage())
                        + ")";
            }
        }
        return "phase " + pod.getStatus().getPhase();
    }

    /**
     * Why an existing pod can no longer run anything, or empty when it can: it is being deleted, it was evicted (the
     * kubelet's ephemeral-storage or memory pressure), its container was OOM-killed, it reached its activeDeadline,
     * or it ended otherwise.
     *
     * @param pod the pod as the API server has it, or null when it is gone
     */
    static Optional<String> goneReason(Pod pod) {
        if (pod == null) {
            return Optional.of("the pod was deleted");
        }
        if (pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null) {
            return Optional.of("the pod is being deleted");
        }
        for (ContainerStatus cs : containerStatuses(pod)) {
            ContainerStateTerminated t = cs.getState() == null ? null : cs.getState().getTerminated();
            if (t == null && cs.getLastState() != null) {
                t = cs.getLastState().getTerminated();
            }
            if (t != null && "OOMKilled".equals(t.getReason())) {
                return Optional.of("the container ran out of memory and was killed (OOMKilled); its memory limit is "
                        + "too small for what ran in it");
            }
        }
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        String reason = pod.getStatus() == null ? null : pod.getStatus().getReason();
        String message = pod.getStatus() == null ? null : pod.getStatus().getMessage();
        if ("Evicted".equals(reason)) {
            return Optional.of("the pod was evicted by the kubelet (" + message + ")");
        }
        if ("DeadlineExceeded".equals(reason)) {
            return Optional.of("the pod reached its activeDeadlineSeconds (the workspace's time to live)");
        }
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            for (ContainerStatus cs : containerStatuses(pod)) {
                ContainerStateTerminated t = cs.getState() == null ? null : cs.getState().getTerminated();
                if (t != null) {
                    return Optional.of("the pod's container ended (" + t.getReason() + ", exit code "
                            + t.getExitCode() + ")");
                }
            }
            return Optional.of("the pod ended (phase " + phase + (reason == null ? "" : ", " + reason)
                    + (message == null ? "" : ": " + message) + ")");
        }
        return Optional.empty();
    }

    private static List<ContainerStatus> containerStatuses(Pod pod) {
        return pod == null || pod.getStatus() == null ? List.of() : pod.getStatus().getContainerStatuses();
    }
}
