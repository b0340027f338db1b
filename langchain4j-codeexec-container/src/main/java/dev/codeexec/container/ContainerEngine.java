package dev.codeexec.container;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.jupyter.BoundaryKernels;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.network.EgressBridge;
import dev.codeexec.network.EgressCapable;
import dev.codeexec.network.WorkspaceEgress;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.DiskQuotaBuilder;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.InterpreterEngine;
import dev.codeexec.spi.ListingRunner;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.StandardWorkspaceFS;
import dev.codeexec.workspace.WorkspaceLayout;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs programs in Docker (or Podman's Docker API) containers: one long-lived container per workspace, from an image
 * the operator chooses, and one exec per run.
 *
 * <p><strong>The container is the boundary.</strong> Defaults: no network, every capability dropped,
 * {@code no-new-privileges}, memory (no swap), CPU and process limits, the Docker socket never mounted, programs run
 * as a non-root user ({@value #DEFAULT_UID}) and PID 1 as {@code nobody}, handling no signal, so no run can end it.
 * A stopped container (a Docker engine restart) is started again on the next call with its files; a run whose backend
 * breaks after it started ends in {@link RunOutcomeUnknownException}. Optional: a read-only root file system (the
 * workspace is a volume, {@code /tmp} a tmpfs), another OCI runtime (gVisor's {@code runsc}). What a container does
 * not give: a kernel of its own (use {@code runsc} or a VM backend for that).
 *
 * <p>Each run: its environment is exactly the run's ({@code env -i}); its processes carry a group id of their own,
 * so a timeout kills the whole tree inside the container, detached daemons included; leftovers are killed when the
 * program exits; stdin reaches end of file; a run killed by the memory limit says so on stderr. Files move through
 * the archive (tar) API.
 *
 * <pre>{@code
 * try (ContainerEngine engine = ContainerEngine.builder().image("codeexec-python:bookworm").build()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", "print(42)").build());
 * }
 * }</pre>
 *
 * <p>Python blocks run as a fresh {@code python3} per block, or, built with {@link Builder#pythonKernel}, as cells of
 * one kernel per workspace ({@link BoundaryKernels}): a program of the workspace like any run (same user, limits,
 * network, environment), spoken to over its exec's stdin and stdout, so no port is opened into the container.
 *
 * <p>The image needs a POSIX {@code sh} and the basic utilities ({@code env}, {@code head}, {@code mkfifo},
 * {@code mv}, {@code rm}, {@code find}); it is never pulled: build or load it on the engine.
 */
public final class ContainerEngine extends InterpreterEngine implements EgressCapable {

    private static final Logger LOG = LoggerFactory.getLogger(ContainerEngine.class);

    /** The default memory limit of a workspace container: {@value} bytes (512 MiB), no swap. */
    public static final long DEFAULT_MEMORY_BYTES = 512L << 20;
    /** The default process limit of a workspace container: {@value}. */
    public static final int DEFAULT_PROCESSES = 256;
    /** The default CPU share of a workspace container: {@value} CPUs. */
    public static final double DEFAULT_CPUS = 1.0;
    /** The default idle time of a pooled container before it is replaced: 10 minutes. */
    public static final Duration DEFAULT_POOL_IDLE = Duration.ofMinutes(10);

    /**
     * The default user (and group) id of runs: {@value}, not root and not a user of the image. The workspace (and its
     * {@code home/} and {@code tmp/}) belongs to it; an image's tools that need no account of their own
     * ({@code sh}, {@code python3}) work as any user.
     */
    public static final int DEFAULT_UID = 1000;

    private final DockerConnection docker;
    private final ContainerSettings settings;
    private final ContainerWorkspaces workspaces;
    /** The workspaces' volumes of this host (their disk quota), or null. */
    private final ContainerVolumes volumes;
    /** The egress proxy of an engine with an egress policy, or null. */
    private final ContainerEgress egress;
    private final WorkspaceFS fs;
    private final Capabilities capabilities;
    private final String engineId = UUID.randomUUID().toString();
    private final String helperUser;
    private final ContainerRuns runs;
    private final ListingRunner listingRunner = new ListingRunner(super.runner(), ChronoUnit.SECONDS);
    /** The workspaces' Python kernels ({@link Builder#pythonKernel}), or null: a fresh process per block. */
    private final BoundaryKernels kernels;

    private ContainerEngine(Builder b) {
        super("ContainerEngine", b, ShellEnvironmentPolicy.sandboxDefault(), limits(b));
        this.settings = ContainerSettings.resolve(b.image, b.network, b.uid, b.gid, b.readOnlyRootFilesystem,
                b.memoryBytes, b.processes, b.cpus, b.runtime, b.poolSize, b.poolIdle, b.openFilesRlimit,
                b.processesRlimit);
        this.helperUser = settings.uid() + ":" + settings.gid();
        this.docker = DockerConnection.open(b.dockerHost, b.certPath, b.tlsVerify);
        ContainerVolumes vols = null;
        ContainerEgress out = null;
        try {
            docker.requireReachable();
            out = ContainerEgress.forEngine(egressPolicy(), egressProxySettings(), b.network, settings.poolSize(),
                    docker.host());
            this.egress = out;
            vols = ContainerVolumes.forEngine(b.diskQuota, docker.host(), settings.gid());
            this.volumes = vols;
            this.workspaces = new ContainerWorkspaces(docker, settings, engineId, volumes, egress, this::stopKernel);
            if (b.sweepLeftovers) {
                workspaces.sweepLeftovers();
            }
        } catch (RuntimeException e) {
            if (vols != null) {
                vols.close();
            }
            if (out != null) {
                out.close();
            }
            docker.close();
            throw e;
        }
        this.runs = new ContainerRuns(docker, settings, egress, helperUser);
        StandardWorkspaceFS files = StandardWorkspaceFS.builder().files(ws -> files(ws)).inputRoots(inputRoots())
                .artifacts(artifactStore()).roomCheck(volumes == null ? null
                        : (ws, bytes) -> volumes.requireRoom(workspaces.container(ws).id, bytes)).build();
        BoundaryKernels k = b.pythonKernel == null ? null
                : new BoundaryKernels("ContainerEngine", b.pythonKernel, (ws, spec) -> plan(ws, spec, false), files);
        this.kernels = k;
        // With a kernel, an empty out/ is seen through its relay: no archive request per cell (KernelOutputsFS).
        this.fs = k == null ? files : new KernelOutputsFS(files, k::outputsSeenEmpty);
        this.capabilities = Capabilities.builder()
                .isolation(Isolation.CONTAINER)
                .networkAllowed(b.network)
                .readOnlyMount(false)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(EnumSet.allOf(ResourceLimit.class))
                .diskQuota(volumes != null)
                .egressControl(egress == null ? EgressControl.NONE : EgressControl.PROXY)
                .statefulCells(kernels != null)
                .build();
        if (b.network) {
            LOG.warn("ContainerEngine: workspace containers get a network (bridge); programs can reach it");
        }
        LOG.info("ContainerEngine {} on image {} (network {}, memory {} bytes, {} processes, {} CPUs)",
                engineId.substring(0, 8), settings.image(), settings.network(), settings.memoryBytes(), settings.pids(),
                settings.nanoCpus() / 1e9);
    }

    private static ResourceLimits limits(Builder b) {
        return ResourceLimits.builder()
                .memoryBytes(b.memoryBytes == null ? DEFAULT_MEMORY_BYTES : b.memoryBytes)
                .maxProcesses(b.processes == null ? DEFAULT_PROCESSES : b.processes)
                .build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "container";
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

    /** The engine's egress (built with {@link Builder#egress}); empty without an egress policy. */
    @Override
    public Optional<WorkspaceEgress> egress() {
        return Optional.ofNullable(egress).map(ContainerEgress::egress);
    }

    /** This engine instance's id, the value of the {@code dev.codeexec.engine} label on its containers. */
    public String instanceId() {
        return engineId;
    }

    /**
     * Removes workspace containers that crashed processes on this host left behind (labelled, created before this
     * engine, by a process that is gone). Runs at start unless {@link Builder#sweepLeftovers(boolean)} is off.
     *
     * @return how many were removed
     */
    public int sweepLeftovers() {
        requireOpen();
        return workspaces.sweepLeftovers();
    }

    /** How many pre-started containers wait in the warm pool now. */
    public int pooledContainers() {
        return workspaces.pooled();
    }

    ContainerFiles files(Workspace ws) {
        WorkspaceContainer c = workspaces.running(ws);
        return new ContainerFiles(docker, docker.controlHttp(), c.id, ContainerWorkspaces.ROOT, helperUser,
                settings.uid(), settings.gid());
    }

    /** The container id of a workspace (for tests and operators). */
    String containerId(Workspace ws) {
        return workspaces.container(ws).id;
    }

    DockerConnection docker() {
        return docker;
    }

    /** Lists the change report's folders inside a run when asked ({@link ListingRunner}). */
    @Override
    public ProgramRunner runner() {
        return listingRunner;
    }

    /**
     * Python blocks as cells of the workspace's kernel, started with its first cell inside the workspace's container
     * (a {@link dev.codeexec.engine.BackendUnavailableException} when it cannot start, for one when the image has no
     * ipykernel); rich outputs are saved under {@code out/}.
     */
    @Override
    protected CellRunner cells(Workspace ws) {
        workspaces.container(ws); // the workspace must still be there
        return kernels.cells(ws);
    }

    @Override
    protected String interpreterName() {
        return "a Python kernel in the workspace's container";
    }

    /** True when built with {@link Builder#pythonKernel}; otherwise every block runs as a fresh process. */
    @Override
    protected boolean hasInterpreter() {
        return kernels != null;
    }

    /**
     * Stops the workspace's Python kernel and starts a fresh one: variables and imports are gone, files stay.
     *
     * @throws UnsupportedCapabilityException when the engine was built without {@link Builder#pythonKernel}
     * @throws dev.codeexec.engine.BackendUnavailableException when the new kernel cannot be started
     */
    public void restartKernel(Workspace ws) {
        requireOpen();
        if (kernels == null) {
            throw new UnsupportedCapabilityException("this ContainerEngine has no Python kernel (see "
                    + "ContainerEngine.Builder.pythonKernel)");
        }
        workspaces.container(ws);
        kernels.restartKernel(ws);
    }

    /** Ends the workspace's kernel, if any, before its container is removed. */
    private void stopKernel(Workspace ws) {
        if (kernels != null) {
            kernels.stopKernel(ws);
        }
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        return plan(ws, spec, true);
    }

    /** A run ({@code run} true) or the workspace's kernel, as {@link ContainerRuns#plan} tells them apart. */
    private PreparedRun plan(Workspace ws, RunProgramSpec spec, boolean run) {
        ResourceLimits limits = limitsFor(spec);
        WorkspaceContainer c = workspaces.running(ws);
        if (spec.cmd().contains("=")) {
            throw new InvalidSpecException("cmd '" + spec.cmd() + "' must not contain '='");
        }
        String cwdRel = PathResolver.normalize(spec.cwd());
        String cwd = ContainerWorkspaces.ROOT;
        if (!cwdRel.equals(".")) {
            cwd = ContainerWorkspaces.ROOT + "/" + files(ws).resolveDirectory(cwdRel);
        }
        String runDir = WorkspaceLayout.newRunDir();
        Map<String, String> env = environment().forRun(spec,
                RunEnvironment.runtimeVariables(ContainerWorkspaces.ROOT, runDir, true));
        if (egress != null) {
            env.putAll(EgressBridge.environment()); // the model's own proxy settings would lead nowhere
        }
        return runs.plan(c, ws.id(), spec, limits, cwd, runDir, env, outputCap(spec),
                run ? listingRunner.claim() : null, run);
    }

    @Override
    protected void closeBackend() {
        RuntimeException failure = kernels == null ? null : attempt(null, kernels::close);
        failure = attempt(failure, workspaces::close);
        if (volumes != null) {
            failure = attempt(failure, volumes::close);
        }
        if (egress != null) {
            failure = attempt(failure, egress::close);
        }
        failure = attempt(failure, docker::close);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Builder for {@link ContainerEngine}. The image is required (the operator's choice, never the model's); the
     * environment policy defaults to {@link ShellEnvironmentPolicy#sandboxDefault()}. A disk quota ({@link #diskQuota})
     * can be enforced where the JVM runs as root beside the Docker engine, reached through its UNIX socket.
     */
    public static final class Builder extends EngineBuilder<Builder> implements DiskQuotaBuilder<Builder> {
        private String image;
        private String dockerHost;
        private String certPath;
        private Boolean tlsVerify;
        private boolean network;
        private Integer uid;
        private Integer gid;
        private boolean readOnlyRootFilesystem;
        private Long memoryBytes;
        private Integer processes;
        private Double cpus;
        private String runtime;
        private Integer poolSize;
        private Duration poolIdle;
        private boolean sweepLeftovers = true;
        private Long openFilesRlimit;
        private Long processesRlimit;
        private Long diskQuota;
        private KernelOptions pythonKernel;

        private Builder() {
        }

        /**
         * Containers enforce an egress policy ({@link #egress}) through the engine's proxy: they get no network, and
         * the proxy, whose socket is bound into each, is the only way out. Needs the Docker engine on this host,
         * python3 in the image and no warm pool; otherwise {@link #build()} refuses the policy.
         */
        @Override
        protected EgressControl egressControl() {
            return EgressControl.PROXY;
        }

        /** The workspace image, present on the engine (never pulled); required. */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /**
         * The engine's endpoint ({@code unix:///var/run/docker.sock}, {@code tcp://host:2376}); default
         * {@code DOCKER_HOST}, else the local socket.
         */
        public Builder dockerHost(String dockerHost) {
            this.dockerHost = dockerHost;
            return this;
        }

        /**
         * Client certificates for TCP with TLS: a directory with {@code ca.pem}, {@code cert.pem}, {@code key.pem};
         * default {@code DOCKER_CERT_PATH}. Turns TLS verification on.
         */
        public Builder tls(String certPath) {
            this.certPath = certPath;
            this.tlsVerify = true;
            return this;
        }

        /** Gives containers a network (Docker's bridge); default false: no network at all. */
        public Builder network(boolean network) {
            this.network = network;
            return this;
        }

        /**
         * Runs programs as this numeric user and group, which own the workspace; default
         * {@value #DEFAULT_UID}:{@value #DEFAULT_UID}. {@code user(0, 0)} runs them as root (still without
         * capabilities, with no-new-privileges); no run can signal the container's PID 1 either way (it runs as
         * {@code nobody} and handles no signal).
         */
        public Builder user(int uid, int gid) {
            if (uid < 0 || gid < 0) {
                throw new InvalidSpecException("user (" + uid + ":" + gid + ") must be non-negative ids");
            }
            this.uid = uid;
            this.gid = gid;
            return this;
        }

        /** A read-only root file system (the workspace is a volume, {@code /tmp} a tmpfs); default false. */
        public Builder readOnlyRootFilesystem(boolean readOnly) {
            this.readOnlyRootFilesystem = readOnly;
            return this;
        }

        /** The memory limit of each workspace container, no swap; default {@value #DEFAULT_MEMORY_BYTES}. */
        public Builder memoryBytes(long memoryBytes) {
            this.memoryBytes = memoryBytes;
            return this;
        }

        /** The process limit of each workspace container; default {@value #DEFAULT_PROCESSES}. */
        public Builder processes(int processes) {
            this.processes = processes;
            return this;
        }

        /** The CPUs of each workspace container; default {@value #DEFAULT_CPUS}. */
        public Builder cpus(double cpus) {
            this.cpus = cpus;
            return this;
        }

        /** The OCI runtime ({@code runsc} for gVisor); default the engine's ({@code runc}). */
        public Builder runtime(String runtime) {
            this.runtime = runtime;
            return this;
        }

        /**
         * Keeps {@code size} containers pre-started so that a workspace starts without waiting; each is handed to one
         * workspace only and removed with it. Pooled containers idle longer than {@code idle} are replaced. Default
         * 0 (no pool), idle 10 minutes.
         */
        public Builder warmPool(int size, Duration idle) {
            this.poolSize = size;
            this.poolIdle = idle;
            return this;
        }

        /**
         * The containers' own {@code RLIMIT_NOFILE} and {@code RLIMIT_NPROC} (soft and hard); default unset, the
         * engine's defaults. Podman sets high defaults that a host with lower hard limits refuses ("error setting
         * rlimits"): give values within the host's there. Per-run limits ({@code ResourceLimits}) only lower them.
         */
        public Builder containerRlimits(long openFiles, long processes) {
            this.openFilesRlimit = openFiles;
            this.processesRlimit = processes;
            return this;
        }

        /** {@inheritDoc} On this engine each container's {@code /codeexec} is that volume; see docs/container.md. */
        @Override
        public Builder diskQuota(long bytes) {
            this.diskQuota = DiskQuotaBuilder.requireValid(bytes);
            return this;
        }

        /**
         * Runs python blocks as cells of one Python kernel per workspace, inside its container, instead of a fresh
         * {@code python3} per block: variables, imports and loaded data persist from block to block. The kernel
         * starts with the workspace's first python block and is a program of the workspace like any run (same user,
         * limits, network, environment); it ends after {@link KernelOptions#idleTimeout()} idle, with the workspace,
         * or by {@link ContainerEngine#restartKernel}. The image needs ipykernel ({@code python3-ipykernel}).
         * Default null: a fresh process per block.
         */
        public Builder pythonKernel(KernelOptions options) {
            this.pythonKernel = options;
            return this;
        }

        /** Removes containers left by crashed processes when the engine starts; default true. */
        public Builder sweepLeftovers(boolean sweep) {
            this.sweepLeftovers = sweep;
            return this;
        }

        public ContainerEngine build() {
            return new ContainerEngine(this);
        }
    }
}
