package dev.codeexec.kubernetes;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.SafeNames;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workspaces of a {@link KubernetesEngine}: each one a pod, either of the engine's own ({@link PodWorkspaces})
 * or claimed from an agent-sandbox warm pool ({@link SandboxClaims}), with the workspace layout made in it and the
 * launcher of its runs' wrappers probed once ({@link PodScripts.Reaper}).
 *
 * <p>Thread-safe: callers create and remove workspaces concurrently; the map is concurrent and no lock is held over a
 * call to the API server or an exec.
 */
final class KubernetesWorkspaces implements WorkspaceManager {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesWorkspaces.class);

    /**
     * A live workspace's pod.
     *
     * @param pod    the pod's name
     * @param reaper what makes its runs' wrappers child subreapers
     * @param claim  the agent-sandbox claim that gave the pod, or null for a pod of the engine's own
     */
    record WorkspacePod(String pod, PodScripts.Reaper reaper, ClaimedSandbox claim) {
    }

    private final PodWorkspaces pods;
    private final SandboxClaims claims;
    private final PodExec exec;
    private final String engineId;
    private final PodEgress egress;
    private final Map<String, WorkspacePod> byWorkspace = new ConcurrentHashMap<>();

    /**
     * @param pods   the engine's own pods, or null when pods are claimed
     * @param claims the agent-sandbox claims, or null when the engine makes its own pods
     * @param egress the egress tunnels of an engine with an egress policy, or null
     */
    KubernetesWorkspaces(PodWorkspaces pods, SandboxClaims claims, PodExec exec, String engineId, PodEgress egress) {
        if ((pods == null) == (claims == null)) {
            throw new IllegalArgumentException("exactly one of pods and claims");
        }
        this.pods = pods;
        this.claims = claims;
        this.exec = exec;
        this.engineId = engineId;
        this.egress = egress;
    }

    @Override
    public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
        if (policy != null && policy.maxDiskBytes() > 0) {
            throw new UnsupportedCapabilityException("KubernetesEngine cannot enforce WorkspacePolicy.maxDiskBytes: "
                    + "a pod's emptyDir size limit (KubernetesEngine.Builder.workspaceBytes) makes the kubelet evict "
                    + "the pod, it does not refuse writes; refusing to create the workspace");
        }
        String id = SafeNames.label(execId, "ws", 40) + "-" + UUID.randomUUID().toString().substring(0, 8);
        ClaimedSandbox claim = null;
        String pod;
        if (pods != null) {
            pod = pods.create(id);
        } else {
            claim = claims.claim(Map.of(PodLabels.ENGINE, engineId, PodLabels.WORKSPACE, PodLabels.value(id)));
            pod = claim.podName();
        }
        try {
            if (claim != null && !PodLayout.CONTAINER.equals(claim.container())) {
                throw new PolicyViolationException("the claimed pod " + pod + " has no container named '"
                        + PodLayout.CONTAINER + "' (it has '" + claim.container() + "'): the engine runs programs in "
                        + "the layout of its own pod spec; make the SandboxTemplate from it (see docs/kubernetes.md)");
            }
            PodScripts.Reaper reaper = exec.prepare(pod, layout());
            if (reaper == PodScripts.Reaper.NONE) {
                LOG.warn("workspace {}: the image of pod {} has neither python3 nor perl; a daemon that detaches from "
                        + "a run's process tree outlives the run's kill", id, pod);
            }
            if (egress != null) {
                egress.open(exec, id, pod, reaper);
            }
            byWorkspace.put(id, new WorkspacePod(pod, reaper, claim));
        } catch (RuntimeException e) {
            if (egress != null) {
                egress.closeWorkspace(id);
            }
            release(id, pod, claim, e);
            throw e;
        }
        LOG.debug("workspace {} in pod {}", id, pod);
        return new Workspace(id, PodLayout.ROOT);
    }

    /** The workspace layout and the runs' control folder, made by the pod's user (the execs run as it). */
    private static List<String> layout() {
        List<String> dirs = new ArrayList<>(List.of(PodLayout.ROOT, PodLayout.CONTROL));
        for (String d : WorkspaceLayout.DIRECTORIES) {
            dirs.add(PodLayout.ROOT + "/" + d);
        }
        return dirs;
    }

    /**
     * The pod of a live workspace of this engine.
     *
     * @throws WorkspaceGoneException when the workspace is not (or no longer) one of this engine's
     */
    WorkspacePod pod(Workspace ws) {
        WorkspacePod p = byWorkspace.get(ws.id());
        if (p == null) {
            throw new WorkspaceGoneException("workspace '" + ws.id() + "' is not a live workspace of this engine");
        }
        return p;
    }

    /**
     * Why a workspace's pod can no longer run anything (deleted, evicted, OOM-killed, past its deadline), for a call
     * that failed; empty when the pod looks alive or the engine cannot tell (a claimed pod).
     */
    Optional<WorkspaceGoneException> whyGone(Workspace ws) {
        if (pods == null || !byWorkspace.containsKey(ws.id())) {
            return Optional.empty();
        }
        try {
            return pods.whyGone(ws.id());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public void cleanup(Workspace ws) {
        WorkspacePod p = byWorkspace.remove(ws.id());
        if (egress != null) {
            egress.closeWorkspace(ws.id());
        }
        if (p != null) {
            release(ws.id(), p.pod(), p.claim(), null);
        } else if (pods != null) {
            pods.delete(ws.id()); // a workspace whose set-up failed half-way: its pod, if any
        }
    }

    private void release(String workspaceId, String pod, ClaimedSandbox claim, RuntimeException failure) {
        try {
            if (claim != null) {
                claims.release(claim.claimName());
            } else {
                pods.delete(workspaceId);
            }
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    /** The live workspaces' pods, for diagnostics and tests. */
    Map<String, WorkspacePod> workspaces() {
        return Map.copyOf(byWorkspace);
    }

    /** The egress tunnels of an engine with an egress policy, or null. */
    PodEgress egress() {
        return egress;
    }

    /** Releases every workspace's pod, then the engine's own pods, lease and threads, and the egress tunnels. */
    void close() {
        RuntimeException failure = null;
        for (String id : List.copyOf(byWorkspace.keySet())) {
            WorkspacePod p = byWorkspace.remove(id);
            if (p != null && p.claim() != null) {
                try {
                    claims.release(p.claim().claimName());
                } catch (RuntimeException e) {
                    failure = failure == null ? e : failure;
                }
            }
        }
        if (pods != null) {
            try {
                pods.close();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (egress != null) {
            egress.close();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
