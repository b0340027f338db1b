package dev.codeexec.kubernetes;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.SafeNames;
import dev.codeexec.workspace.WorkspaceLayout;
import io.fabric8.kubernetes.api.model.Pod;
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
 * <p>Fails closed on the tree kill: a pod whose image has neither {@code python3} nor {@code perl} ({@link
 * PodScripts.Reaper#NONE}) cannot make a run's wrapper a child subreaper, so a daemon that double-forks away would
 * outlive the run's timeout, against the engine's promise that a timeout kills the whole process tree. Such a
 * workspace is refused (its pod released) unless the builder accepts it; either way {@link #hardening} reports it.
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
    private final ClaimKeeper keeper;
    private final PodExec exec;
    private final boolean acceptWithoutTreeKill;
    private final PodEgress egress;
    private final Map<String, WorkspacePod> byWorkspace = new ConcurrentHashMap<>();

    /**
     * @param pods                  the engine's own pods, or null when pods are claimed
     * @param keeper                the agent-sandbox claims with their Lease and sweeper, or null when the engine
     *                              makes its own pods; closed by {@link #close()}
     * @param acceptWithoutTreeKill true to use a pod whose image offers no subreaper ({@link PodScripts.Reaper#NONE})
     * @param egress                the egress tunnels of an engine with an egress policy, or null
     */
    KubernetesWorkspaces(PodWorkspaces pods, ClaimKeeper keeper, PodExec exec, boolean acceptWithoutTreeKill,
                         PodEgress egress) {
        if ((pods == null) == (keeper == null)) {
            throw new IllegalArgumentException("exactly one of pods and claims");
        }
        this.pods = pods;
        this.claims = keeper == null ? null : keeper.claims();
        this.keeper = keeper;
        this.exec = exec;
        this.acceptWithoutTreeKill = acceptWithoutTreeKill;
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
            claim = claims.claim(keeper.labels(id), List.of(keeper.ownerReference()));
            pod = claim.podName();
        }
        try {
            if (claim != null && !PodLayout.CONTAINER.equals(claim.container())) {
                throw new PolicyViolationException("the claimed pod " + pod + " has no container named '"
                        + PodLayout.CONTAINER + "' (it has '" + claim.container() + "'): the engine runs programs in "
                        + "the layout of its own pod spec; make the SandboxTemplate from it (see docs/kubernetes.md)");
            }
            PodScripts.Reaper reaper = exec.prepare(pod, layout());
            requireTreeKill(reaper, pod, acceptWithoutTreeKill);
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

    /**
     * Fails closed on a pod without a subreaper, unless accepted.
     *
     * @throws PolicyViolationException when {@code reaper} is {@link PodScripts.Reaper#NONE} and {@code accept} false
     */
    static void requireTreeKill(PodScripts.Reaper reaper, String pod, boolean accept) {
        if (reaper == PodScripts.Reaper.NONE && !accept) {
            throw new PolicyViolationException("the image of pod " + pod + " has neither python3 nor perl, so a "
                    + "run's wrapper cannot be a child subreaper and a daemon that detaches from a run would "
                    + "outlive its kill; use an image with python3 or perl, or accept this with "
                    + "KubernetesEngine.Builder.acceptWithoutTreeKill(true)");
        }
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
     * What the pod of a live workspace lacks of the engine's hardening, and whether its tree kill holds.
     *
     * @throws WorkspaceGoneException when the workspace is not (or no longer) one of this engine's
     */
    WorkspaceHardening hardening(Workspace ws) {
        WorkspacePod p = pod(ws);
        return new WorkspaceHardening(p.claim() == null ? Map.of() : p.claim().missingHardening(),
                p.reaper() != PodScripts.Reaper.NONE);
    }

    /**
     * Why a workspace's pod can no longer run anything (deleted, evicted, OOM-killed, past its deadline, or, for a
     * claimed pod, replaced by its controller), for a call that failed; empty when the pod looks alive or the API
     * server cannot be asked.
     */
    Optional<WorkspaceGoneException> whyGone(Workspace ws) {
        WorkspacePod p = byWorkspace.get(ws.id());
        if (p == null) {
            return Optional.empty();
        }
        try {
            if (p.claim() == null) {
                return pods.whyGone(ws.id());
            }
            ClaimedSandbox c = p.claim();
            Pod pod = claims.readPod(c.podName());
            Optional<String> reason = pod != null && c.podUid() != null
                    && !c.podUid().equals(pod.getMetadata().getUid())
                    ? Optional.of("its controller replaced it with a new pod of the same name")
                    : PodFailures.goneReason(pod);
            return reason.map(r -> new WorkspaceGoneException("the pod " + c.podName() + " of workspace '" + ws.id()
                    + "' (SandboxClaim " + c.claimName() + ") is gone with its files: " + r));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Deletes what engines that are gone left behind: pods, or claims.
     *
     * @return how many were deleted
     */
    int sweep() {
        return pods != null ? pods.sweep() : keeper.sweep();
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

    /**
     * Releases every workspace's pod, then the engine's own pods (or its claims' keeper), Lease and threads, and the
     * egress tunnels.
     */
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
        try {
            if (pods != null) {
                pods.close();
            } else {
                keeper.close();
            }
        } catch (RuntimeException e) {
            failure = failure == null ? e : failure;
        }
        if (egress != null) {
            egress.close();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
