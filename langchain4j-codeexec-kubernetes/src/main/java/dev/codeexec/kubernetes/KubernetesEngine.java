package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.network.EgressCapable;
import dev.codeexec.network.WorkspaceEgress;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.AbstractEngine;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.ListingRunner;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.StandardWorkspaceFS;
import dev.codeexec.workspace.WorkspaceLayout;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs programs in Kubernetes: one hardened pod per workspace in a configured namespace, or, where the
 * agent-sandbox CRDs are installed and {@link Builder#agentSandbox} asks for it, the pod of a {@code SandboxClaim}.
 * Runs and sessions are execs over the {@code pods/exec} subresource (WebSocket channel protocol v5 where the API
 * server offers it, v4 otherwise); files move as tar streams over exec, as {@code kubectl cp} moves them.
 *
 * <p><strong>The pod is the boundary.</strong> Defaults ({@link PodSpecs}): a non-root user, every capability
 * dropped, no privilege escalation, seccomp {@code RuntimeDefault}, a read-only root file system with the workspace on
 * an {@code emptyDir} with a size limit, no service-account token, no host namespaces, CPU, memory and
 * ephemeral-storage limits, an optional RuntimeClass (gVisor, Kata), and a NetworkPolicy that denies all egress and
 * ingress. What the pod spec asks, the kubelet and the container runtime enforce; what depends on the cluster (a CNI
 * that enforces NetworkPolicy, the RuntimeClass's handler, Pod Security Admission) is listed by
 * {@link #clusterConditions()}.
 *
 * <p>Each run: its environment is exactly the run's ({@code env -i}): the pod's ({@link PodTemplate#env()}, with its
 * {@code PATH}) under the environment policy's and the run's variables, never the JVM's ({@link PodEnvironment}); its
 * wrapper is a child subreaper, so a timeout kills its whole tree inside the pod, detached daemons included; leftovers
 * are killed when the program exits; stdin reaches end of file under both protocols. {@link #close()} deletes the
 * engine's pods. They are owned by the engine's Lease: a dead engine's pods are deleted by the next sweep of any engine
 * in the namespace, or when the Lease is deleted (also by the garbage collector, with its {@link Builder#leaseOwner}).
 *
 * <pre>{@code
 * try (KubernetesEngine engine = KubernetesEngine.builder().image("registry.example/codeexec-python:bookworm")
 *         .namespace("agents").build()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", "print(42)").build());
 * }
 * }</pre>
 *
 * <p>The image needs {@code sh}, GNU {@code tar}, coreutils and findutils (any Debian or Ubuntu based image), and
 * {@code python3} or {@code perl} for the tree kill to hold against detached daemons.
 */
public final class KubernetesEngine extends AbstractEngine implements EgressCapable {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesEngine.class);

    /** The default memory limit of a workspace pod: {@value} bytes (1 GiB). */
    public static final long DEFAULT_MEMORY_BYTES = 1L << 30;
    /** The default CPU limit of a workspace pod: {@value} CPUs. */
    public static final double DEFAULT_CPUS = 1.0;
    /** The default size limit of a workspace's {@code emptyDir}: {@value} bytes (512 MiB). */
    public static final long DEFAULT_WORKSPACE_BYTES = 512L << 20;
    /** How long a new pod may take to become ready by default: 2 minutes (an image pull may take that long). */
    public static final Duration DEFAULT_READY_TIMEOUT = Duration.ofMinutes(2);

    private final EngineCluster cluster;
    private final PodTemplate template;
    private final String engineId = UUID.randomUUID().toString();
    private final KubernetesWorkspaces workspaces;
    private final PodExec exec;
    private final PodEgress egress;
    private final PodRuns runs;
    private final StandardWorkspaceFS fs;
    private final Capabilities capabilities;
    private final List<String> clusterConditions;
    private final ListingRunner listingRunner = new ListingRunner(super.runner(), ChronoUnit.NANOS);
    private final PodEnvironment environment;

    private KubernetesEngine(Builder b, PodTemplate template) {
        super("KubernetesEngine", b, ShellEnvironmentPolicy.sandboxDefault(), ResourceLimits.builder()
                .memoryBytes(template.limits().get("memory").getNumericalAmount().longValue()).build());
        this.template = template;
        this.environment = new PodEnvironment(template, environmentPolicy(), b.hostEnvironment);
        this.cluster = EngineCluster.open(b, template, engineId,
                () -> PodEgress.forEngine(egressPolicy(), egressProxySettings()));
        this.exec = cluster.exec();
        this.workspaces = cluster.workspaces();
        this.egress = cluster.egress();
        this.runs = new PodRuns(exec, defaultLimits().memoryBytes(), workspaces::whyGone);
        this.fs = StandardWorkspaceFS.builder().files(this::files).inputRoots(inputRoots())
                .artifacts(artifactStore()).build();
        boolean asIs = b.sandboxWarmPool != null && b.acceptUnhardenedSandbox;
        boolean network = asIs || template.egressProxy() != null || cluster.pods() != null
                && cluster.pods().openedBy().isPresent();
        this.capabilities = Capabilities.builder()
                .isolation(asIs ? Isolation.EXTERNAL : Isolation.CONTAINER)
                .networkAllowed(network)
                .readOnlyMount(false)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(EnumSet.of(ResourceLimit.CPU_TIME, ResourceLimit.FILE_SIZE, ResourceLimit.OPEN_FILES,
                        ResourceLimit.MEMORY))
                .diskQuota(false)
                .egressControl(egress == null ? EgressControl.NONE : EgressControl.PROXY)
                .build();
        this.clusterConditions = ClusterConditions.of(template, b.sandboxWarmPool != null);
        LOG.info("KubernetesEngine {} on {} (image {}, {})", engineId.substring(0, 8),
                cluster.client().getMasterUrl(),
                template.image(), b.sandboxWarmPool == null ? "pods of its own" : "agent-sandbox warm pool "
                        + b.sandboxWarmPool);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "kubernetes";
    }

    @Override
    public WorkspaceManager manager() {
        return workspaces;
    }

    @Override
    public WorkspaceFS fs() {
        return fs;
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    /**
     * What this engine's guarantees rely on beyond the pod spec it writes: the cluster's network plugin for
     * NetworkPolicy, the kubelet for seccomp, non-root and storage limits, the RuntimeClass's handler. One sentence
     * each.
     */
    public List<String> clusterConditions() {
        return clusterConditions;
    }

    /** This engine instance's id, the value of the {@code dev.codeexec/engine} label on its pods. */
    public String instanceId() {
        return engineId;
    }

    /** The pod spec's settings every workspace pod of this engine gets. */
    public PodTemplate podTemplate() {
        return template;
    }

    /**
     * Deletes pods or claims (and Leases) of engines that are gone: their Lease expired or was deleted. Runs at start
     * unless {@link Builder#sweepLeftovers(boolean)} is off, and periodically.
     *
     * @return how many pods (or claims) were deleted
     */
    public int sweepLeftovers() {
        requireOpen();
        return workspaces.sweep();
    }

    /**
     * What the pod of a live workspace lacks of the engine's hardening, and whether its tree kill holds; anything
     * only when the builder accepted it ({@link Builder#acceptUnhardenedSandbox}, {@link Builder#acceptWithoutTreeKill}).
     * Throws {@link dev.codeexec.engine.WorkspaceGoneException} when {@code ws} is not a live workspace of this engine.
     */
    public WorkspaceHardening hardeningOf(Workspace ws) {
        requireOpen();
        return workspaces.hardening(ws);
    }

    PodFiles files(Workspace ws) {
        return new PodFiles(workspaces.pod(ws).pod(), exec, template.uid(), template.gid(), PodFiles.Limits.DEFAULT);
    }

    @Override
    public Optional<WorkspaceEgress> egress() {
        return Optional.ofNullable(egress).map(PodEgress::egress);
    }

    KubernetesWorkspaces workspaces() {
        return workspaces;
    }

    PodExec exec() {
        return exec;
    }

    /** Lists the change report's folders inside a run when asked ({@link ListingRunner}). */
    @Override
    public ProgramRunner runner() {
        return listingRunner;
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        ResourceLimits limits = limitsFor(spec);
        KubernetesWorkspaces.WorkspacePod pod = workspaces.pod(ws);
        if (spec.cmd().contains("=")) {
            throw new InvalidSpecException("cmd '" + spec.cmd() + "' must not contain '='");
        }
        String cwdRel = PathResolver.normalize(spec.cwd());
        String cwd = PodLayout.ROOT;
        if (!cwdRel.equals(".")) {
            cwd = PodLayout.ROOT + "/" + files(ws).resolveDirectory(cwdRel);
        }
        String runDir = WorkspaceLayout.newRunDir();
        Map<String, String> env = environment.forRun(spec,
                RunEnvironment.runtimeVariables(PodLayout.ROOT, runDir, true));
        if (egress != null) {
            env.putAll(egress.beforeRun(exec, ws.id())); // the proxy's variables: the model's own lead nowhere
        }
        PreparedRun run = runs.plan(ws, pod, spec, limits, cwd, runDir, env, outputCap(spec), listingRunner.claim());
        return egress == null ? run : egress.counted(ws.id(), run);
    }

    @Override
    protected void closeBackend() {
        cluster.close();
    }

    /**
     * Builder for {@link KubernetesEngine}. The image is required (the operator's choice, never the model's); the
     * cluster comes from an explicit client, or else from fabric8's usual search: {@code KUBECONFIG} or
     * {@code ~/.kube/config} (its current context, or {@link #context}), else the in-cluster service account.
     */
    public static final class Builder extends EngineBuilder<Builder> {
        PodTemplate pod;
        KubernetesClient client;
        String context;
        String namespace;
        String image;
        Long uid;
        Long gid;
        Long memoryBytes;
        Double cpus;
        Long workspaceBytes;
        String runtimeClassName;
        Duration readyTimeout;
        Duration ttl;
        int poolSize;
        String sandboxWarmPool;
        boolean acceptUnhardenedSandbox;
        boolean acceptWithoutTreeKill;
        boolean sweepLeftovers = true;
        boolean acceptOtherNetworkPolicies;
        OwnerReference leaseOwner;
        Map<String, String> hostEnvironment = Map.of();
        Map<String, String> downwardApi; // where POD_NAME and POD_UID are looked up; null: the process environment

        private Builder() {
            super.hostEnvironment(Map.of());
        }

        /** Host variables the environment policy filters into runs, over the pod's own; default none. */
        @Override
        public Builder hostEnvironment(Map<String, String> hostEnvironment) {
            this.hostEnvironment = hostEnvironment == null ? Map.of() : Map.copyOf(hostEnvironment);
            return super.hostEnvironment(this.hostEnvironment);
        }

        /**
         * The owner of the engine's Lease, in its namespace (the application's Pod, Deployment...): deleting it has
         * the garbage collector delete the Lease and every pod of the engine, even one that died. Default: the JVM's
         * pod, when the downward API gives {@code POD_NAME} and {@code POD_UID} and the API server confirms it
         * ({@link LeaseOwner}); else none.
         */
        public Builder leaseOwner(OwnerReference owner) {
            this.leaseOwner = owner;
            return this;
        }

        /**
         * Accepts, with a warning, other NetworkPolicies that select the workspace pods and allow egress (policies
         * add up), and says {@code networkAllowed}; default false: the build, and later new workspaces, are refused.
         */
        public Builder acceptOtherNetworkPolicies(boolean accept) {
            this.acceptOtherNetworkPolicies = accept;
            return this;
        }

        /** Pods keep no network under an egress policy and reach the engine's proxy through a tunnel over exec. */
        @Override
        protected EgressControl egressControl() {
            return EgressControl.PROXY;
        }

        /**
         * Every setting of the workspace pods at once ({@link PodTemplate}: image, resources, node selection,
         * tolerations, pull secrets, labels...); the builder's own settings ({@link #image}, {@link #memoryBytes},
         * ...) override its fields.
         */
        public Builder pod(PodTemplate template) {
            this.pod = template;
            return this;
        }

        /** The client to use (the engine does not close it); default a client from the kubeconfig or in-cluster. */
        public Builder client(KubernetesClient client) {
            this.client = client;
            return this;
        }

        /** The kubeconfig context to use when the engine makes its own client; default the current context. */
        public Builder context(String context) {
            this.context = context;
            return this;
        }

        /** The namespace of the workspace pods; default the client's (the context's, or the pod's own in-cluster). */
        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** The workspace image, pulled by the cluster as it is configured to (never by the engine); required. */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /** The numeric user and group every process of a workspace pod runs as; never 0. Default 10001:10001. */
        public Builder user(long uid, long gid) {
            if (uid <= 0 || gid <= 0) {
                throw new InvalidSpecException("user (" + uid + ":" + gid + ") must be positive ids: pods never run "
                        + "as root");
            }
            this.uid = uid;
            this.gid = gid;
            return this;
        }

        /** The memory limit of each workspace pod; default {@value #DEFAULT_MEMORY_BYTES}. */
        public Builder memoryBytes(long memoryBytes) {
            this.memoryBytes = memoryBytes;
            return this;
        }

        /** The CPU limit of each workspace pod; default {@value #DEFAULT_CPUS}. */
        public Builder cpus(double cpus) {
            this.cpus = cpus;
            return this;
        }

        /** The size limit of each workspace's {@code emptyDir}; default {@value #DEFAULT_WORKSPACE_BYTES}. */
        public Builder workspaceBytes(long bytes) {
            this.workspaceBytes = bytes;
            return this;
        }

        /** A RuntimeClass for the pods ({@code gvisor}, {@code kata}), set up by the cluster's admin; default none. */
        public Builder runtimeClassName(String runtimeClassName) {
            this.runtimeClassName = runtimeClassName;
            return this;
        }

        /** How long a new pod may take to become ready; default 2 minutes. */
        public Builder readyTimeout(Duration timeout) {
            this.readyTimeout = timeout;
            return this;
        }

        /**
         * The longest a workspace pod may live ({@code activeDeadlineSeconds}); default the template's, 12 hours.
         * Past it the kubelet stops the pod (the workspace is gone) and the sweeper deletes it.
         */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** Keeps {@code size} ready pods so that a workspace starts without waiting; default 0. */
        public Builder warmPool(int size) {
            this.poolSize = size;
            return this;
        }

        /**
         * Takes workspace pods from agent-sandbox: a {@code SandboxClaim} against the {@code SandboxWarmPool}
         * named {@code warmPool} in the engine's namespace, instead of pods of the engine's own.
         */
        public Builder agentSandbox(String warmPool) {
            this.sandboxWarmPool = warmPool;
            return this;
        }

        /**
         * Accepts claimed agent-sandbox pods that lack some of the engine's hardening ({@link PodHardening}, network
         * included; default false: refused). Then {@link KubernetesEngine#describe()} claims only what holds whatever
         * the template says ({@link Isolation#EXTERNAL}, network allowed); {@link KubernetesEngine#hardeningOf} lists
         * what each workspace's pod lacks.
         */
        public Builder acceptUnhardenedSandbox(boolean accept) {
            this.acceptUnhardenedSandbox = accept;
            return this;
        }

        /**
         * Accepts workspace pods whose image has neither {@code python3} nor {@code perl} (no subreaper: a daemon
         * that double-forks away outlives its run's timeout); default false, fail closed: such a workspace is
         * refused ({@link dev.codeexec.engine.PolicyViolationException}) so that "a timeout kills the whole process
         * tree" stays true. Accepted, {@link KubernetesEngine#hardeningOf} reports {@code treeKill} false.
         */
        public Builder acceptWithoutTreeKill(boolean accept) {
            this.acceptWithoutTreeKill = accept;
            return this;
        }

        /** Deletes pods of engines that are gone (their Lease expired) at build; default true. A failure fails it. */
        public Builder sweepLeftovers(boolean sweep) {
            this.sweepLeftovers = sweep;
            return this;
        }

        /**
         * Builds the engine: checks the settings, connects, creates the engine's Lease and the NetworkPolicy (or
         * checks that agent-sandbox is installed), checks the namespace's other NetworkPolicies, and sweeps leftovers.
         * A build that fails deletes what it created and stops what it started.
         *
         * @throws InvalidSpecException            when a setting is invalid (no image; an egress policy with
         *                                         agentSandbox or with the template's egress proxy)
         * @throws BackendUnavailableException     when no cluster is configured, or its API server refuses or is mute
         * @throws UnsupportedCapabilityException when another NetworkPolicy lets the pods out
         */
        public KubernetesEngine build() {
            return new KubernetesEngine(this, PodEgress.checked(egressPolicy(), template(), sandboxWarmPool != null));
        }

        private PodTemplate template() {
            PodTemplate.Builder t = pod == null ? PodTemplate.builder() : pod.toBuilder();
            if (image != null) {
                t.image(image);
            } else if (pod == null) {
                throw new InvalidSpecException("image must be set: the operator chooses the workspace image");
            }
            if (namespace != null) {
                t.namespace(namespace);
            }
            if (uid != null) {
                t.user(uid, gid);
            }
            if (memoryBytes != null) {
                if (memoryBytes < (16L << 20)) {
                    throw new InvalidSpecException("memoryBytes (" + memoryBytes + ") must be at least 16 MiB");
                }
                t.memory(Long.toString(Math.min(256L << 20, memoryBytes)), Long.toString(memoryBytes));
            }
            if (cpus != null) {
                if (!(cpus > 0)) {
                    throw new InvalidSpecException("cpus (" + cpus + ") must be positive");
                }
                long milli = Math.max(1, Math.round(cpus * 1000));
                t.cpu(Math.min(250, milli) + "m", milli + "m");
            }
            if (workspaceBytes != null) {
                t.workspaceSizeLimit(Long.toString(workspaceBytes));
            }
            if (runtimeClassName != null) {
                t.runtimeClassName(runtimeClassName);
            }
            if (ttl != null) {
                t.activeDeadline(ttl);
            }
            if (poolSize < 0) {
                throw new InvalidSpecException("warmPool (" + poolSize + ") must not be negative");
            }
            if (poolSize > 0 && sandboxWarmPool != null) {
                throw new InvalidSpecException("warmPool and agentSandbox exclude each other: agent-sandbox keeps its "
                        + "own warm pool (SandboxWarmPool)");
            }
            return t.build();
        }
    }
}
