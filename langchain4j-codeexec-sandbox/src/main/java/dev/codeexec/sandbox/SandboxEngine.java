package dev.codeexec.sandbox;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CommandAllowListEnforcement;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.network.EgressCapable;
import dev.codeexec.network.WorkspaceEgress;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.InterpreterEngine;
import dev.codeexec.spi.DiskQuotaBuilder;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.workspace.PathResolver;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs programs in an OS sandbox: bubblewrap on Linux, Seatbelt on macOS. Built to hold against model-written code
 * that actively tries to get out.
 *
 * <p><b>What a program can do</b> is set by a {@link PermissionProfile} (default {@link
 * PermissionProfile#workspaceWrite()}): read the host read-only, write its own workspace, nothing else. Other
 * workspaces, host secrets ({@link PermissionProfile#DEFAULT_HIDDEN_PATHS}) and the network are out of reach; its
 * environment is decided by a {@link ShellEnvironmentPolicy} (default: core variables only, credentials dropped).
 * On Linux each run gets new user, PID, IPC, UTS, cgroup and (network restricted) network namespaces,
 * {@code --cap-drop ALL}, {@code --new-session}, {@code --die-with-parent} and a seccomp filter (see
 * {@code docs/sandbox.md}).
 *
 * <p><b>Runs are bounded by default</b>: memory, processes and a CPU share of their own, where the host can enforce
 * them (see {@link Builder#limits}); programs are never host root where the platform allows it.
 *
 * <p><b>Fail closed.</b> The builder runs a {@link Preflight}: when the sandbox cannot start on this host,
 * {@link #builder()}{@code .build()} throws {@link BackendUnavailableException} saying what to fix. Nothing ever runs
 * without the sandbox because of a configuration or host problem; only {@link PermissionProfile#dangerFullAccess()}
 * and {@link PermissionProfile#external} run without one, because they say so.
 *
 * <pre>{@code
 * try (SandboxEngine engine = SandboxEngine.builder()
 *         .profile(PermissionProfile.workspaceWrite().withReadPaths("/srv/datasets"))
 *         .limits(ResourceLimits.builder().memoryBytes(4L << 30).build())   // default 2 GiB, 1024 processes
 *         .build()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", "print(1)").build());
 * }
 * }</pre>
 *
 * <p><b>Python blocks</b> run as fresh programs, or, built with {@link Builder#pythonKernel}, as cells of one python
 * kernel per workspace inside the workspace's sandbox (state persists between blocks).
 *
 * <p>Thread-safe. {@link #close()} kills running sessions, stops the kernels and removes every workspace and the
 * sandbox root it created.
 */
public final class SandboxEngine extends InterpreterEngine implements EgressCapable {

    private static final Logger LOG = LoggerFactory.getLogger(SandboxEngine.class);

    /** The engine's parts on this host: see {@link SandboxParts}. */
    private final SandboxParts parts;
    /** The workspaces' python kernels ({@link Builder#pythonKernel}), or null: python blocks run as programs. */
    private final SandboxKernels kernels;
    private final Capabilities capabilities;
    private final WorkspaceManager workspaces;

    private SandboxEngine(Builder b) {
        super("SandboxEngine", b, ShellEnvironmentPolicy.sandboxDefault(), null);
        this.parts = new SandboxParts(b, new SandboxParts.EngineSettings(egressPolicy(), egressProxySettings(),
                artifactStore(), inputRoots(), environment(), this::requireOpen));
        try {
            this.kernels = b.pythonKernel == null ? null : new SandboxKernels(b.pythonKernel,
                    (ws, spec) -> plan(ws, spec, AdditionalPermissions.NONE), parts.gates, parts.fs, parts.allowList,
                    parts.host.cgroups() != null, parts.platform == SandboxPlatform.LINUX_BWRAP
                            && parts.profile.enforcement() == PermissionProfile.Enforcement.MANAGED
                            && parts.profile.network() == NetworkMode.RESTRICTED);
        } catch (RuntimeException e) {
            attempt(e, parts::close);
            throw e;
        }
        this.capabilities = kernels == null ? parts.capabilities
                : parts.capabilities.toBuilder().statefulCells(true).build();
        this.workspaces = kernels == null ? parts.workspaces : kernels.stoppingKernels(parts.workspaces);
        parts.host.logStart(LOG, parts.platform, parts.profile, parts.profileName, parts.capabilities,
                parts.defaultLimits);
    }

    /** A sandbox engine with every default (see {@link Builder}). */
    public static SandboxEngine create() {
        return builder().build();
    }

    /** A builder whose every setting has the strict default (see {@link Builder}). */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "sandbox";
    }

    @Override
    public WorkspaceManager manager() {
        return workspaces;
    }

    /**
     * The engine's egress (built with {@link Builder#egress}): its policy, and each workspace's gate, where a
     * workspace's policy can be narrowed ({@link WorkspaceEgress#narrow}). Empty without an egress policy.
     */
    @Override
    public Optional<WorkspaceEgress> egress() {
        return Optional.ofNullable(parts.egress).map(SandboxEgress::egress);
    }

    @Override
    public WorkspaceFS fs() {
        return parts.fs;
    }

    /** Tests and diagnostics: the launcher threads alive now. */
    int launcherThreadCount() {
        return parts.launchers.threadCount();
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    /**
     * The cells of the workspace's python kernel ({@link Builder#pythonKernel}): it starts inside the workspace's
     * sandbox with the first python block, bounded by the options' start timeout; rich outputs are saved under
     * {@code out/}.
     */
    @Override
    protected CellRunner cells(Workspace ws) {
        parts.fs.resolver(ws); // the workspace must still be there
        return kernels.cells(ws);
    }

    @Override
    protected String interpreterName() {
        return "the workspace's python kernel inside the sandbox";
    }

    /** True when built with {@link Builder#pythonKernel}; otherwise every block runs as a program, as always. */
    @Override
    protected boolean hasInterpreter() {
        return kernels != null;
    }

    /**
     * Stops the workspace's python kernel and starts a fresh one inside its sandbox, waiting until it answers.
     * Variables and imports are gone afterwards; files stay.
     *
     * @throws UnsupportedCapabilityException when the engine was built without {@link Builder#pythonKernel}
     * @throws BackendUnavailableException    when the new kernel cannot be started
     */
    public void restartKernel(Workspace ws) {
        requireOpen();
        if (kernels == null) {
            throw new UnsupportedCapabilityException("this SandboxEngine runs python blocks as programs: it has no "
                    + "kernel to restart (build it with pythonKernel(...) for one)");
        }
        parts.fs.resolver(ws);
        kernels.restart(ws);
    }

    /** The profile every run starts from. */
    public PermissionProfile profile() {
        return parts.profile;
    }

    /**
     * Runs one program with extra grants for this run only.
     *
     * @throws InvalidSpecException           for a bad spec or grant
     * @throws PolicyViolationException       when the profile refuses the layout (a grant vanished, a planted link)
     * @throws UnsupportedCapabilityException for a resource limit this host cannot enforce
     * @throws BackendUnavailableException    when the sandbox could not be set up
     */
    public RunResult runProgram(Workspace ws, RunProgramSpec spec, AdditionalPermissions extra) {
        return parts.gates.exclusive(ws, () -> SandboxRun.runReplanningOnHostChange(() -> plan(ws, spec, extra),
                this::run));
    }

    /** One program at a time per workspace: see {@link WorkspaceGates}. */
    @Override
    protected RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        return runProgram(ws, spec, AdditionalPermissions.NONE);
    }

    @Override
    protected ProgramSession startProgram(Workspace ws, RunProgramSpec spec) {
        return parts.gates.startSession(ws, () -> start(plan(ws, spec, AdditionalPermissions.NONE)));
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        return plan(ws, spec, AdditionalPermissions.NONE);
    }

    private SandboxRun plan(Workspace ws, RunProgramSpec spec, AdditionalPermissions extra) {
        requireOpen();
        return parts.planner.plan(ws.id(), parts.fs.resolver(ws), parts.fs.readOnlyPaths(ws), spec,
                extra == null ? AdditionalPermissions.NONE : extra, limitsFor(spec), outputCap(spec),
                parts.host.user());
    }

    @Override
    protected ResourceLimits defaultLimits() {
        return parts.defaultLimits;
    }

    @Override
    protected String limitsOwner() {
        return parts.limitsOwner();
    }

    /**
     * Diagnostic: the exact host command (launching shell, bubblewrap and its arguments, including the program's
     * environment as {@code --setenv} values) that {@link #runProgram(Workspace, RunProgramSpec, AdditionalPermissions)}
     * would start for this spec now. Nothing is started; the checks and the layout are the same as for a run. Useful
     * to see the sandbox an operator gets, and to measure the engine against a raw start of the same command. The
     * launch refers to a private run directory of the engine (its status file, links to pinned files), which stays
     * until {@link #close()}; it carries no control group (memory and process limits are not applied to it).
     */
    public ProgramLaunch plannedLaunch(Workspace ws, RunProgramSpec spec, AdditionalPermissions extra) {
        return parts.gates.exclusive(ws, () -> plan(ws, spec, extra).plannedLaunch(parts.host.cgroups()));
    }

    /** Directories the scans for protected metadata remember of a workspace's tree (for tests). */
    long rememberedDirectories(Workspace ws) {
        return parts.planner.rememberedDirectories(parts.manager.hostPath(ws));
    }

    /**
     * Runs one program with an existing host directory as its workspace, for operators trying a policy (the CLI).
     * The standard layout ({@code work/}, {@code out/}, …) is created in the directory; nothing is removed afterwards.
     * The directory is bound like any workspace: writable under {@link PermissionProfile#workspaceWrite()},
     * read-only under {@link PermissionProfile#readOnly()}.
     *
     * @throws PolicyViolationException when the directory is the host root, contains the sandbox root, or is hidden by
     *                                  the profile
     */
    public RunResult runInDirectory(Path directory, RunProgramSpec spec, AdditionalPermissions extra) {
        Path dir = parts.root.requireOperatorDirectory(directory);
        requireOpen();
        SandboxUser owner = parts.host.user().forDirectory(dir);
        PathResolver resolver = SandboxRoot.layOut(dir, owner);
        return SandboxRun.runReplanningOnHostChange(() -> parts.planner.plan(dir.toString(), resolver, Set.of(), spec,
                extra == null ? AdditionalPermissions.NONE : extra, limitsFor(spec), outputCap(spec), owner),
                this::run);
    }

    /** Stops the kernels, then removes every workspace, the engine's state and (when it created it) the root. */
    @Override
    protected void closeBackend() {
        RuntimeException failure = kernels == null ? null : attempt(null, kernels::close);
        failure = attempt(failure, parts::close);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Builder for {@link SandboxEngine}. Every setting is optional. A disk quota ({@link #diskQuota}) can be enforced
     * on Linux with the engine running as root.
     */
    public static final class Builder extends EngineBuilder<Builder> implements DiskQuotaBuilder<Builder> {
        Path rootDir;
        PermissionProfile profile;
        NetworkMode network;
        ResourceLimits limits;
        PreflightMode preflightMode;
        Path bwrapPath;
        Long scratchBytes;
        Long diskQuota;
        SandboxPlatform platform;
        Integer sandboxUid;
        Integer sandboxGid;
        CommandPolicy deniedBy;
        CommandPolicy allowListBy;
        KernelOptions pythonKernel;
        java.time.Duration launcherKeepAlive;

        private Builder() {
        }

        /** Tests: how long an idle launcher thread without a live sandbox stays; default 60 s. */
        Builder launcherKeepAlive(java.time.Duration keepAlive) {
            this.launcherKeepAlive = keepAlive;
            return this;
        }

        /**
         * The sandbox root: workspaces live in {@code <root>/workspaces}, the engine's state in {@code <root>/state}.
         * Every sandbox sees none of it except its own workspace. Default: a new temporary directory, removed on
         * {@link SandboxEngine#close()}.
         */
        public Builder rootDir(Path rootDir) {
            this.rootDir = rootDir;
            return this;
        }

        /** What programs may see and change; default {@link PermissionProfile#workspaceWrite()}. */
        public Builder profile(PermissionProfile profile) {
            this.profile = profile;
            return this;
        }

        /** How programs' environments are built; default {@link ShellEnvironmentPolicy#sandboxDefault()}. */
        @Override
        public Builder environmentPolicy(ShellEnvironmentPolicy policy) {
            return super.environmentPolicy(policy);
        }

        /** Overrides the profile's network mode; default: the profile's ({@link NetworkMode#RESTRICTED}). */
        public Builder network(NetworkMode network) {
            this.network = network;
            return this;
        }

        /**
         * Limits applied to every run (a run's own limits override them field by field). <b>Default: bounded</b> —
         * {@value RunLimits#DEFAULT_MEMORY_MIB} MiB of memory and {@value RunLimits#DEFAULT_MAX_PROCESSES} processes
         * per run, where this host can enforce them (see {@code describe().enforcedLimits()}); limits set here replace
         * those defaults field by field, and {@link ResourceLimits#NONE} turns them off. The build fails with
         * {@link UnsupportedCapabilityException} when this host cannot enforce a limit set here; memory limits need
         * control groups, process limits control groups or programs that are not root.
         */
        public Builder limits(ResourceLimits limits) {
            this.limits = limits;
            return this;
        }

        /** What the preflight accepts; default {@link PreflightMode#STRICT}. */
        public Builder preflightMode(PreflightMode mode) {
            this.preflightMode = mode;
            return this;
        }

        /**
         * The artifact store for {@code artifact://} inputs and saved outputs; default none. The root directory of a
         * {@link FileSystemArtifactService} is hidden from every sandbox (a no-access rule is added to the profile);
         * the location of any other store, or of a store the application uses without passing it here, must be
         * hidden with {@link PermissionProfile#withNoAccessPaths}.
         */
        @Override
        public Builder artifactService(ArtifactService artifacts) {
            return super.artifactService(artifacts);
        }

        /**
         * The bubblewrap executable; default the first of /usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap, else the
         * first {@code bwrap} in the absolute entries of the JVM's {@code PATH}.
         */
        public Builder bwrapPath(Path bwrapPath) {
            this.bwrapPath = bwrapPath;
            return this;
        }

        /** {@inheritDoc} On this engine, see docs/sandbox.md, Disk quota. */
        @Override
        public Builder diskQuota(long bytes) {
            this.diskQuota = DiskQuotaBuilder.requireValid(bytes);
            return this;
        }

        /** Size limit of the private {@code /tmp} and {@code /var/tmp} of each run; default 256 MiB. */
        public Builder scratchBytes(long scratchBytes) {
            this.scratchBytes = scratchBytes;
            return this;
        }

        Builder platform(SandboxPlatform platform) {
            this.platform = platform;
            return this;
        }

        /**
         * Enforces a command policy's deny list at run time: the files of the executables it denies are hidden from
         * every sandbox ({@link CommandPolicy#deniedExecutables}), so no wrapper, loader, interpreter or copy can start
         * them, whatever command line the policy let through. Give the same policy to
         * {@code CodeExecution.builder().commandPolicy(...)} for the name-based checks and clear refusals. Default:
         * none. Has no effect on profiles that do not manage a sandbox.
         */
        public Builder hideDeniedExecutables(CommandPolicy policy) {
            this.deniedBy = policy;
            return this;
        }

        /**
         * Enforces a command policy's allow list in the kernel: in every run, a file that is not one of the allowed
         * programs (resolved on {@link ShellEnvironmentPolicy#CLEAN_PATH}, links followed) cannot be executed, whatever
         * starts it: an allowed wrapper, the dynamic loader, a copy in the workspace or {@code /tmp}. Programs start
         * under a Landlock ruleset (execute only the allowed files, their ELF interpreter and {@code sh}; read no
         * program directory), the workspace's volume, {@code /tmp}, {@code /var/tmp} and {@code /dev/shm} are mounted
         * {@code noexec}, and {@code describe().commandAllowListEnforcement()} is then
         * {@link CommandAllowListEnforcement#KERNEL}. Give the same policy to
         * {@code CodeExecution.builder().commandPolicy(...)} for the name-based checks and clear refusals.
         *
         * <p>An allowed interpreter ({@code python3}, {@code perl}, {@code node}) still does in-process what a denied
         * program would: keep them off the list. Programs can read only system data, libraries, the workspace and the
         * profile's read grants; {@code /tmp} lies on the workspace's volume (its quota). Runs with additional
         * permissions that grant paths, profiles with write grants outside the workspace and
         * {@link SandboxEngine#runInDirectory} are refused. Default: off.
         *
         * @throws UnsupportedCapabilityException at {@link #build()} when this host cannot enforce it: no Landlock, not
         *                                        Linux x86_64, no {@code /usr/bin/python3}, or no volume per
         *                                        workspace (the engine must run as root with a disk quota)
         */
        public Builder enforceAllowList(CommandPolicy policy) {
            this.allowListBy = policy;
            return this;
        }

        /**
         * The sandbox enforces an egress policy ({@link #egress}) through the engine's proxy: the network stays
         * restricted (own namespace, loopback only, no DNS) and the proxy, reached through a socket bound into each
         * sandbox, is the only way out; every common client is pointed at it by the run's environment. Needs
         * bubblewrap, a managed profile with the restricted network, and {@code /usr/bin/python3} (which starts each
         * run's forwarder); otherwise {@link #build()} refuses the policy.
         */
        @Override
        protected EgressControl egressControl() {
            return EgressControl.PROXY;
        }

        /**
         * Runs python blocks ({@code executeCode}, the {@code execute_code} tool) as cells of one python kernel per
         * workspace, inside the workspace's sandbox, so that variables, imports and loaded data persist from one block
         * to the next ({@code describe().statefulCells()} is then true). The kernel is a program of the workspace
         * like any run: the same mounts, user, resource limits (for the kernel and everything its cells start,
         * together), network and environment policy. It starts with the workspace's first
         * python block (its start is paid once), and stops when idle for {@link KernelOptions#idleTimeout()}, when the
         * workspace is removed or the engine closed. While the engine works on the workspace's files or runs another
         * program there, the kernel's processes are paused (see docs/sandbox.md, Python kernel). Needs control groups.
         * Default: none, a fresh process per block.
         *
         * @throws UnsupportedCapabilityException at {@link #build()} on a host without control groups, and with
         *                                        {@link #enforceAllowList} (under which no Python can run a kernel)
         */
        public Builder pythonKernel(KernelOptions options) {
            this.pythonKernel = options;
            return this;
        }

        /**
         * The unprivileged host user and group that programs run as when the JVM runs as root; default
         * {@value SandboxUser#DEFAULT_UID}:{@value SandboxUser#DEFAULT_GID}. Nothing else on the host may use them (a
         * process of that user could reach into every sandbox); the engine's workspaces belong to them. Ignored when
         * the JVM is not root: programs then run as the JVM's own user.
         */
        public Builder sandboxUser(int uid, int gid) {
            this.sandboxUid = uid;
            this.sandboxGid = gid;
            return this;
        }

        /**
         * Builds the engine and runs the preflight.
         *
         * @throws BackendUnavailableException    when the sandbox cannot run on this host (the message says why)
         * @throws UnsupportedCapabilityException on an unsupported OS, or for default limits this host cannot
         *                                        enforce
         */
        public SandboxEngine build() {
            return new SandboxEngine(this);
        }
    }
}
