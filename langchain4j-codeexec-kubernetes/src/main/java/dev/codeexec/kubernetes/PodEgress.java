package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.network.EgressBridge;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import dev.codeexec.spi.IoThreads;
import dev.codeexec.spi.PreparedRun;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The egress policy on Kubernetes pods. The pods keep the deny-all NetworkPolicy and no DNS: no network path leads out
 * of them. Their one way out is a tunnel over a long-lived exec per workspace ({@link PodTunnel}): a relay in the pod
 * ({@link PodRelay}) listens on the pod's own {@code 127.0.0.1:3128}, where the runs' environment points every common
 * client, and the engine hands each connection to the workspace's gate of the core's {@link WorkspaceEgress}, which
 * decides it (policy, approval, limits, events, narrowing). The exec's attribution to the workspace is inherent: no
 * pod IP is trusted, no network plugin is relied on.
 *
 * <p>The relay runs as the pod's user, so a program may kill it or write frames into its pipes: every connection is
 * still decided by the gate on its own terms, and a malformed frame ends that tunnel only. A relay that is gone is
 * started again before the next run ({@link #beforeRun}); a run that starts while it is down gets failed connections,
 * never a wider network.
 *
 * <p>Thread-safe: the tunnel of a workspace is started and replaced under that workspace's slot lock (held over the
 * relay's start, an exec: runs of one workspace wait for it, other workspaces do not); the map is concurrent.
 */
final class PodEgress implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PodEgress.class);

    /** How long a relay may take to listen. */
    static final Duration RELAY_TIMEOUT = Duration.ofSeconds(30);
    /** Connections a tunnel carries beyond the gate's limit, so that the gate answers those over it itself. */
    static final int MARGIN = 16;

    private final WorkspaceEgress egress;
    private final int maxConnections;
    private final ExecutorService pumps = Executors.newCachedThreadPool(
            IoThreads.daemonThreads("codeexec-kubernetes-egress-"));
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();

    /** A workspace's tunnel, replaced when it ended. */
    private static final class Slot {
        final String pod;
        final PodScripts.Reaper reaper;
        final Path gate;
        PodTunnel tunnel;

        Slot(String pod, PodScripts.Reaper reaper, Path gate) {
            this.pod = pod;
            this.reaper = reaper;
            this.gate = gate;
        }
    }

    private PodEgress(WorkspaceEgress egress, int maxConnections) {
        this.egress = egress;
        this.maxConnections = maxConnections;
    }

    /**
     * Refuses settings under which an egress policy cannot hold, before anything is made.
     *
     * @return {@code template}
     * @throws InvalidSpecException with an operator's own proxy in the template, or agent-sandbox pods
     */
    static PodTemplate checked(EgressPolicy policy, PodTemplate template, boolean agentSandbox) {
        if (policy == null) {
            return template;
        }
        if (template.egressProxy() != null) {
            throw new InvalidSpecException("an egress policy and PodTemplate.egressProxy exclude each other: the "
                    + "policy's proxy is the engine's, reached through a tunnel over exec, and an operator's proxy "
                    + "would be a second way out that the policy does not govern; use one of them");
        }
        if (agentSandbox) {
            throw new InvalidSpecException("an egress policy needs pods of the engine's own: an agent-sandbox pod's "
                    + "network is its SandboxTemplate's, which the engine does not write, so the tunnel could not be "
                    + "its only way out; use no agentSandbox(...) with egress(...)");
        }
        return template;
    }

    /** The engine's egress, with its own proxy; null without a policy. */
    static PodEgress forEngine(EgressPolicy policy, EgressProxy.Builder settings) {
        if (policy == null) {
            return null;
        }
        EgressProxy proxy = settings.build();
        int max = proxy.limits().maxConnections() + MARGIN;
        return new PodEgress(WorkspaceEgress.start(policy, proxy), max);
    }

    /** The engine's egress: its gates, their runs, narrowing. */
    WorkspaceEgress egress() {
        return egress;
    }

    /**
     * Opens a new workspace's gate and starts its relay.
     *
     * @throws BackendUnavailableException when the pod has no interpreter for the relay, or it does not start
     */
    void open(PodExec exec, String workspaceId, String pod, PodScripts.Reaper reaper) {
        if (reaper == PodScripts.Reaper.NONE) {
            throw new BackendUnavailableException("the egress relay cannot run in pod " + pod + ": its image has "
                    + "neither perl nor python3, and an egress policy needs one of them");
        }
        Slot s = new Slot(pod, reaper, egress.directory(workspaceId).resolve(WorkspaceEgress.SOCKET));
        slots.put(workspaceId, s);
        synchronized (s) {
            s.tunnel = PodTunnel.open(exec, pod, reaper, s.gate, maxConnections, pumps, RELAY_TIMEOUT);
        }
    }

    /**
     * Before a run of a workspace: starts its relay again if it ended (a program killed it, it broke the format, its
     * exec was lost).
     *
     * @return the variables that point the run's clients at the relay ({@link EgressBridge#environment()})
     * @throws BackendUnavailableException when the relay does not start again (nothing ran)
     */
    Map<String, String> beforeRun(PodExec exec, String workspaceId) {
        Slot s = slots.get(workspaceId);
        if (s == null) {
            throw new BackendUnavailableException("workspace " + workspaceId + " has no egress tunnel");
        }
        synchronized (s) {
            if (s.tunnel == null || !s.tunnel.alive()) {
                LOG.info("egress relay of pod {} ended; starting it again", s.pod);
                s.tunnel = PodTunnel.open(exec, s.pod, s.reaper, s.gate, maxConnections, pumps, RELAY_TIMEOUT);
            }
        }
        return EgressBridge.environment();
    }

    /**
     * The run counted for the workspace's gate while it lasts ({@link WorkspaceEgress#run}): a gate that went down
     * opens again, and when the workspace's last run ends its connections end.
     */
    PreparedRun counted(String workspaceId, PreparedRun run) {
        AutoCloseable counted = egress.run(workspaceId);
        return new PreparedRun(run.channel(), run.launch()) {
            @Override
            public String runFolder() {
                return run.runFolder();
            }

            @Override
            public RunResult check(RunResult result) {
                return run.check(result);
            }

            @Override
            public void release() {
                try {
                    run.release();
                } finally {
                    try {
                        counted.close();
                    } catch (Exception e) {
                        LOG.debug("could not end a run's egress count: {}", e.toString());
                    }
                }
            }
        };
    }

    /** The tunnel of a workspace now, for tests; null when it has none. */
    PodTunnel tunnel(String workspaceId) {
        Slot s = slots.get(workspaceId);
        if (s == null) {
            return null;
        }
        synchronized (s) {
            return s.tunnel;
        }
    }

    /** Ends a workspace's tunnel and closes its gate. */
    void closeWorkspace(String workspaceId) {
        Slot s = slots.remove(workspaceId);
        if (s != null) {
            synchronized (s) {
                if (s.tunnel != null) {
                    s.tunnel.close();
                }
            }
        }
        egress.closeWorkspace(workspaceId);
    }

    /** Ends every tunnel and the engine's proxy. */
    @Override
    public void close() {
        for (String id : List.copyOf(slots.keySet())) {
            closeWorkspace(id);
        }
        egress.close();
        pumps.shutdownNow();
    }
}
