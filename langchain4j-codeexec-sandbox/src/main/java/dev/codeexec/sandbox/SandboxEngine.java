package dev.codeexec.sandbox;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeExecutor;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.process.BoundedOutput;
import dev.codeexec.process.HostLaunch;
import dev.codeexec.process.HostProcesses;
import dev.codeexec.process.TrackedSession;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceLayout;
import dev.codeexec.workspace.WorkspaceRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * <p>Thread-safe. {@link #close()} kills running sessions and removes every workspace and the sandbox root it
 * created.
 */
public final class SandboxEngine implements Engine, CodeExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(SandboxEngine.class);

    /** Smallest accepted open-files limit: bubblewrap itself needs a few descriptors. */
    static final int MIN_OPEN_FILES = 16;

    private final SandboxPlatform platform;
    private final PermissionProfile profile;
    private final ShellEnvironmentPolicy envPolicy;
    private final ResourceLimits defaultLimits;
    private final Map<String, String> hostEnvironment;
    /** The policy applied to the host environment, once: it does not change during the engine's life. */
    private final Map<String, String> baseEnvironment;
    private final int maxOutputBytes;
    private final long scratchBytes;
    private final Path sandboxRoot;
    private final Path stateDir;
    /** Private per-run directories (status file, pinned file links), removed when the run or session ends. */
    private final Path runsDir;
    private final boolean ownsRoot;
    private final HostWorkspaceManager manager;
    private final SandboxWorkspaceFS fs;
    private final AccessDecision access;
    private final WorkspaceManager workspaces = workspaceManager();
    private final ArtifactService artifacts;
    private final Preflight.Result preflight;
    private final Cgroups cgroups;
    /** Who programs run as on the host: never root where the platform allows (see SandboxUser). */
    private final SandboxUser user;
    /** How a process limit is enforced without a pids control group (see RunLimits). */
    private final RunLimits runLimits;
    private final Capabilities capabilities;
    private final String shell;
    private final WorkspaceRegistry codeWorkspaces;
    private final Set<ProgramSession> sessions = ConcurrentHashMap.newKeySet();
    private final WorkspaceGates gates = new WorkspaceGates();
    /** The seccomp program files, written once per engine into its private state directory. */
    private final Map<NetworkMode, String> seccompFiles = new ConcurrentHashMap<>();
    /**
     * Threads that start sandboxes. bubblewrap's {@code --die-with-parent} (PR_SET_PDEATHSIG) fires when the
     * <em>thread</em> that started it ends, so a sandbox must never be started from a caller's thread that may end
     * first (a request thread that started a session, a virtual thread's carrier). These threads do not time out;
     * there are as many as runs were concurrent at the peak, and they end with the engine.
     */
    private final ThreadPoolExecutor launchers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, Long.MAX_VALUE,
            TimeUnit.NANOSECONDS, new SynchronousQueue<>(), launcherThreads());
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ProgramRunner runner = (ws, spec) -> runProgram(ws, spec, AdditionalPermissions.NONE);
    private final InteractiveProgramRunner interactive = this::startSession;

    private SandboxEngine(Builder b) {
        this.platform = b.platform != null ? b.platform : SandboxPlatform.current();
        PermissionProfile p = b.profile == null ? PermissionProfile.workspaceWrite() : b.profile;
        p = b.network == null ? p : p.withNetwork(b.network);
        this.profile = hideArtifactStore(p, b.artifacts);
        this.envPolicy = b.envPolicy == null ? ShellEnvironmentPolicy.sandboxDefault() : b.envPolicy;
        this.hostEnvironment = Map.copyOf(b.hostEnvironment == null ? System.getenv() : b.hostEnvironment);
        this.baseEnvironment = envPolicy.base(hostEnvironment);
        this.maxOutputBytes = b.maxOutputBytes == null ? BoundedOutput.DEFAULT_CAP : b.maxOutputBytes;
        if (maxOutputBytes <= 0) {
            throw new InvalidSpecException("maxOutputBytes (" + maxOutputBytes + ") must be positive");
        }
        this.scratchBytes = b.scratchBytes == null ? BwrapCommand.DEFAULT_SCRATCH_BYTES : b.scratchBytes;
        if (scratchBytes <= 0) {
            throw new InvalidSpecException("scratchBytes (" + scratchBytes + ") must be positive");
        }
        this.shell = "/bin/sh";

        boolean needsBwrap = platform == SandboxPlatform.LINUX_BWRAP
                && profile.enforcement() != PermissionProfile.Enforcement.EXTERNAL;
        String bwrap = needsBwrap ? Preflight.locateBwrap(b.bwrapPath) : null;

        this.ownsRoot = b.rootDir == null;
        try {
            Path root = b.rootDir == null ? Files.createTempDirectory("codeexec-sandbox-") : b.rootDir;
            Files.createDirectories(root);
            restrict(root);
            this.sandboxRoot = root.toRealPath();
            this.stateDir = sandboxRoot.resolve("state");
            Files.createDirectories(stateDir);
            restrict(stateDir);
            this.runsDir = stateDir.resolve("runs");
            Files.createDirectories(runsDir);
        } catch (IOException e) {
            throw new CodeExecException("cannot create the sandbox root directory: " + e.getMessage(), e);
        }
        this.manager = new HostWorkspaceManager(sandboxRoot.resolve("workspaces"));
        this.artifacts = b.artifacts;
        this.access = new AccessDecision(profile);
        try {
            SandboxUser wanted = needsBwrap ? SandboxUser.detect(b.sandboxUid, b.sandboxGid) : null;
            if (wanted != null) {
                wanted.prepare(manager.baseDir(), sandboxRoot, stateDir, runsDir, manager.baseDir());
            }
            this.preflight = needsBwrap ? Preflight.check(bwrap, b.preflightMode == null ? PreflightMode.STRICT
                    : b.preflightMode, stateDir, wanted) : null;
            this.user = preflight != null && preflight.user() != null ? preflight.user()
                    : SandboxUser.of(SandboxUser.Mode.SAME, -1, -1, null);
            this.fs = new SandboxWorkspaceFS(gates, HostWorkspaceFS.builder().hostPaths(manager::hostPath)
                    .inputRoots(b.inputRoots).artifacts(b.artifacts).access(ws -> access).build(), user,
                    profile.protectedMetadata());
            if (platform == SandboxPlatform.MACOS_SEATBELT
                    && profile.enforcement() == PermissionProfile.Enforcement.MANAGED
                    && !Files.isExecutable(Path.of(SeatbeltProfile.SANDBOX_EXEC))) {
                throw new BackendUnavailableException("sandbox preflight failed: " + SeatbeltProfile.SANDBOX_EXEC
                        + " is missing; the macOS sandbox cannot run. The engine never runs programs without it.");
            }
            this.cgroups = platform == SandboxPlatform.LINUX_BWRAP ? Cgroups.detect() : null;
            this.runLimits = platform == SandboxPlatform.LINUX_BWRAP
                    ? RunLimits.detect(shell, user, cgroups != null && cgroups.pids()) : RunLimits.none();
            this.capabilities = capabilities(platform, profile, cgroups, runLimits.processesByRlimit());
            capabilities.requireLimits(b.limits == null ? ResourceLimits.NONE : b.limits,
                    "SandboxEngine on this host (" + limitsSupport() + ")");
            this.defaultLimits = RunLimits.withDefaults(RunLimits.defaults(capabilities.enforcedLimits()), b.limits);
            validateLimits(defaultLimits);
        } catch (RuntimeException e) {
            cleanupRoot();
            throw e;
        }
        this.codeWorkspaces = WorkspaceRegistry.builder(this).build();
        if (profile.enforcement() == PermissionProfile.Enforcement.DISABLED) {
            LOG.warn("SandboxEngine uses PermissionProfile.dangerFullAccess(): programs run WITHOUT a sandbox, with "
                    + "the host's files and network");
        }
        String unbounded = platform == SandboxPlatform.LINUX_BWRAP
                ? RunLimits.unbounded(capabilities.enforcedLimits()) : "";
        if (!unbounded.isEmpty()) {
            LOG.warn("SandboxEngine cannot bound the {} of a run on this host ({}): a program can exhaust them. "
                    + "Memory and process limits need control groups the engine may create (root, or a delegated "
                    + "cgroup v2 subtree); processes also work through RLIMIT_NPROC when programs do not run as root "
                    + "(Linux 5.14 or later). See docs/sandbox.md, Resource limits", unbounded, limitsSupport());
        }
        LOG.info("SandboxEngine ready: platform={}, profile={}, network={}, cgroups={}, programs as {}, default "
                + "limits={}", platform, profile.enforcement(), profile.network().id(),
                cgroups == null ? "n/a" : cgroups.describe(), user.describe(), defaultLimits);
    }

    /**
     * Hides the root of a {@link FileSystemArtifactService} from every sandbox: the store holds every conversation's
     * saved artifacts, and a program must reach them only through the engine's file operations. Other stores' locations
     * are not known here; hide them with {@link PermissionProfile#withNoAccessPaths}.
     */
    private static PermissionProfile hideArtifactStore(PermissionProfile p, ArtifactService artifacts) {
        if (artifacts instanceof FileSystemArtifactService store
                && p.enforcement() == PermissionProfile.Enforcement.MANAGED) {
            try {
                return p.withNoAccessPaths(store.root().toString());
            } catch (InvalidSpecException e) {
                throw new InvalidSpecException("the profile grants the artifact store's root directory, which the "
                        + "sandbox must hide (it holds every conversation's artifacts); remove that grant", e);
            }
        }
        return p;
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

    private WorkspaceManager workspaceManager() {
        return new WorkspaceManager() {
            @Override
            public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
                requireOpen();
                Workspace w = manager.createWorkspace(execId, policy);
                user.claimTree(Path.of(w.path())); // programs write their workspace, as the sandbox user
                return w;
            }

            @Override
            public void cleanup(Workspace workspace) {
                // No program of the workspace may run while its tree is deleted by name.
                for (ProgramSession s : gates.sessions(workspace)) {
                    s.close();
                }
                gates.exclusiveRun(workspace, () -> {
                    fs.forget(workspace);
                    manager.cleanup(workspace);
                });
                gates.forget(workspace);
            }
        };
    }

    @Override
    public WorkspaceFS fs() {
        return fs;
    }

    @Override
    public ProgramRunner runner() {
        return runner;
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    @Override
    public Optional<InteractiveProgramRunner> interactive() {
        return Optional.of(interactive);
    }

    @Override
    public Optional<ArtifactService> artifacts() {
        return Optional.ofNullable(artifacts);
    }

    /** The profile every run starts from. */
    public PermissionProfile profile() {
        return profile;
    }

    /** The environment policy of every run. */
    public ShellEnvironmentPolicy environmentPolicy() {
        return envPolicy;
    }

    /**
     * Runs the blocks in the workspace named by the input's execution id (created on first use and kept until
     * {@link #close()}), or in a temporary workspace removed afterwards when the id is null.
     */
    @Override
    public CodeExecutionResult executeCode(CodeExecutionInput input) {
        if (input.executionId() == null) {
            Workspace ws = manager().createWorkspace("code", WorkspacePolicy.DEFAULT);
            try {
                return executeCode(ws, input);
            } finally {
                manager().cleanup(ws);
            }
        }
        return codeWorkspaces.withWorkspace(input.executionId(), ws -> executeCode(ws, input));
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
        return gates.exclusive(ws, () -> {
            Prepared p = prepare(ws, spec, extra == null ? AdditionalPermissions.NONE : extra);
            try {
                return p.checkSetup(onLauncher(() -> HostProcesses.run(p.launch)));
            } finally {
                p.release();
            }
        });
    }

    /** Runs {@code task} on a launcher thread and waits; an interrupt of the caller is passed on (the run is killed). */
    private <T> T onLauncher(java.util.concurrent.Callable<T> task) {
        Future<T> f;
        try {
            f = launchers.submit(task);
        } catch (RejectedExecutionException e) {
            throw new CodeExecException("this SandboxEngine is closed");
        }
        try {
            return f.get();
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for the program; it was killed", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new CodeExecException("the run failed: " + e.getCause(), e.getCause());
        }
    }

    private static ThreadFactory launcherThreads() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "codeexec-sandbox-launcher-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private ProgramSession startSession(Workspace ws, RunProgramSpec spec) {
        return gates.startSession(ws, () -> {
            Prepared p = prepare(ws, spec, AdditionalPermissions.NONE);
            ProgramSession s;
            try {
                s = onLauncher(() -> HostProcesses.start(p.launch, UUID.randomUUID().toString()));
            } catch (RuntimeException e) {
                p.release();
                throw e;
            }
            return TrackedSession.track(s, sessions, p::release);
        });
    }

    /** A launch ready to start, the cgroups and the private run directory to release after it. */
    private static final class Prepared {
        final HostLaunch launch;
        final Cgroups.RunGroup group;
        final Path runDir;
        /** True when bubblewrap reports the start on the status descriptor; false when the launcher does. */
        final boolean viaBwrap;
        final Path workspace;
        /** The run's layout, whose placeholders are removed after the run; null when nothing was mounted. */
        SandboxLayout.Plan plan;

        Prepared(HostLaunch launch, Cgroups.RunGroup group, Path runDir, boolean viaBwrap, Path workspace) {
            this.launch = launch;
            this.group = group;
            this.runDir = runDir;
            this.viaBwrap = viaBwrap;
            this.workspace = workspace;
        }

        RunResult checkSetup(RunResult r) {
            String status;
            try {
                status = Files.readString(statusFile(runDir));
            } catch (IOException e) {
                status = ""; // nothing reported: the program did not start
            }
            return SandboxEngine.checkSetup(r, status, viaBwrap, workspace);
        }

        void release() {
            try {
                if (group != null) {
                    group.close();
                }
                if (plan != null) {
                    plan.removePlaceholders();
                }
            } finally {
                try {
                    deleteTree(runDir);
                    Files.deleteIfExists(statusFile(runDir));
                } catch (RuntimeException | IOException e) {
                    LOG.warn("could not remove a run's private directory: {}", e.toString());
                }
            }
        }
    }

    /**
     * Diagnostic: the exact host command (launching shell, bubblewrap and its arguments, including the program's
     * environment as {@code --setenv} values) that {@link #runProgram(Workspace, RunProgramSpec, AdditionalPermissions)}
     * would start for this spec now. Nothing is started; the checks and the layout are the same as for a run. Useful
     * to see the sandbox an operator gets, and to measure the engine against a raw start of the same command. The
     * launch refers to a private run directory of the engine (its status file, links to pinned files), which stays
     * until {@link #close()}; it joins a control group of the engine's with the run's limits, kept until
     * {@link #close()} (one for every planned launch).
     */
    public HostLaunch plannedLaunch(Workspace ws, RunProgramSpec spec, AdditionalPermissions extra) {
        return gates.exclusive(ws, () -> {
            Prepared p = prepare(ws, spec, extra == null ? AdditionalPermissions.NONE : extra);
            List<String> procs = List.of();
            if (p.group != null) {
                try {
                    procs = cgroups.planned(p.group).procsFiles(); // same limits, in a group kept until close()
                } catch (IOException e) {
                    throw new BackendUnavailableException("cannot create the planned launch's control group", e);
                } finally {
                    p.group.close();
                }
            }
            HostLaunch l = p.launch;
            return new HostLaunch(Launcher.withCgroups(l.argv(), procs), l.environment(), l.directory(), l.stdin(),
                    l.timeout(), l.maxOutputBytes(), l.listener(), l.wrapped());
        });
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
        Path dir;
        try {
            dir = directory.toRealPath();
        } catch (IOException e) {
            throw new InvalidSpecException("workspace directory '" + directory + "' does not exist");
        }
        if (!Files.isDirectory(dir)) {
            throw new InvalidSpecException("workspace directory '" + directory + "' is not a directory");
        }
        if (dir.getParent() == null || sandboxRoot.startsWith(dir) || dir.startsWith(sandboxRoot)) {
            throw new PolicyViolationException("workspace directory '" + directory + "' would expose the host root "
                    + "or the sandbox root; choose a dedicated directory");
        }
        SandboxUser owner = user.forDirectory(dir);
        PathResolver resolver = new PathResolver(dir);
        for (String d : WorkspaceLayout.DIRECTORIES) {
            owner.claimPath(dir, PathResolver.normalize(resolver.relativize(resolver.ensureDirectory(d)))); // no link
        }
        Prepared p = prepare(resolver, Set.of(), spec, extra == null ? AdditionalPermissions.NONE : extra, owner);
        try {
            return p.checkSetup(onLauncher(() -> HostProcesses.run(p.launch)));
        } finally {
            p.release();
        }
    }

    private Prepared prepare(Workspace ws, RunProgramSpec spec, AdditionalPermissions extra) {
        requireOpen();
        PathResolver resolver = fs.resolver(ws);
        return prepare(resolver, fs.readOnlyPaths(ws), spec, extra, user);
    }

    private Prepared prepare(PathResolver resolver, Set<String> readOnlyPaths, RunProgramSpec spec,
                             AdditionalPermissions extra, SandboxUser user) {
        requireOpen();
        ResourceLimits limits = merge(defaultLimits, spec.limits());
        capabilities.requireLimits(limits, "SandboxEngine on this host (" + limitsSupport() + ")");
        validateLimits(limits);
        PermissionProfile runProfile = extra.applyTo(profile);
        if (profile.enforcement() == PermissionProfile.Enforcement.MANAGED && !readOnlyPaths.isEmpty()) {
            runProfile = runProfile.withReadPaths(readOnlyPaths.toArray(String[]::new));
        }
        Path root = resolver.root();
        String cwdRel = PathResolver.normalize(spec.cwd());
        Path cwd = resolver.resolveExisting(cwdRel);
        if (!Files.isDirectory(cwd)) {
            throw new InvalidSpecException("cwd '" + cwdRel + "' is not a directory");
        }
        AccessDecision decision = runProfile == profile ? access : new AccessDecision(runProfile);
        if (!decision.canRead(resolver.relativize(cwd))) {
            throw new PolicyViolationException("cwd '" + cwdRel + "' is hidden by the permission profile");
        }
        String runDir = WorkspaceLayout.newRunDir();
        user.claim(resolver.ensureDirectory(runDir)); // the program writes its run directory
        Map<String, String> runtime = new LinkedHashMap<>(WorkspaceLayout.variables(root.toString(), runDir));
        String tmp = root.resolve(WorkspaceLayout.TMP).toString();
        runtime.put("HOME", root.resolve(WorkspaceLayout.HOME).toString());
        runtime.put("TMPDIR", tmp);
        runtime.put("TMP", tmp);
        runtime.put("TEMP", tmp);
        Map<String, String> env = envPolicy.finish(spec.cleanEnv() ? Map.of() : baseEnvironment, spec.env(),
                spec.cleanEnv(), runtime);

        Path privateDir = newRunDirectory();
        Cgroups.RunGroup group = null;
        try {
            boolean managed = runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED;
            // Only bubblewrap mounts: a path-based sandbox (Seatbelt) has nothing to pin.
            Path pinDir = platform == SandboxPlatform.LINUX_BWRAP ? privateDir : null;
            SandboxLayout.Plan plan = managed ? SandboxLayout.plan(runProfile, root, sandboxRoot,
                    SandboxLayout.homeDirectories(), pinDir, user) : null;
            if (plan != null && !plan.visible(cwd.toString())) {
                throw new PolicyViolationException("the working directory is hidden by the permission profile");
            }
            String command = resolveCommand(spec.cmd(), env.get("PATH"), cwd, plan);
            List<String> programArgv = new ArrayList<>();
            programArgv.add(command);
            programArgv.addAll(spec.args());

            if (cgroups != null && (limits.memoryBytes() != null || cgroups.cpu()
                    || limits.maxProcesses() != null && cgroups.pids())) {
                try {
                    group = cgroups.open(limits.memoryBytes(), cgroups.pids() ? limits.maxProcesses() : null);
                } catch (IOException e) {
                    throw new BackendUnavailableException("cannot create the run's control group for its memory or "
                            + "process limit: " + e.getClass().getSimpleName(), e);
                }
            }
            boolean viaBwrap = platform == SandboxPlatform.LINUX_BWRAP
                    && runProfile.enforcement() != PermissionProfile.Enforcement.EXTERNAL;
            List<String> argv = argv(runProfile, plan, env, cwd, programArgv, limits, group,
                    statusFile(privateDir).toString(), viaBwrap, user);
            int cap = spec.maxOutputBytes() > 0 ? spec.maxOutputBytes() : maxOutputBytes;
            // The launch environment is empty: bubblewrap's own environment is visible in the sandbox as
            // /proc/1/environ, so nothing may be in it. The program's environment travels as --setenv.
            Map<String, String> launchEnv = viaBwrap ? Map.of() : env;
            // Under bubblewrap the launched process is bwrap: a graceful stop must signal the program, not bwrap,
            // whose death ends the namespace at once (--die-with-parent).
            Prepared prepared = new Prepared(new HostLaunch(argv, launchEnv, cwd, spec.stdin(), spec.timeout(), cap,
                    spec.outputListener(), viaBwrap), group, privateDir, viaBwrap, root);
            prepared.plan = plan;
            return prepared;
        } catch (RuntimeException e) {
            new Prepared(null, group, privateDir, false, root).release();
            throw e;
        }
    }

    /**
     * The private directory of one run, inside the engine's state directory (no sandbox can see it). It is created
     * only when the run pins a file there; the run's status file lies beside it. Creating a directory for every run
     * would cost a directory's worth of file-system metadata (about 0.3 ms on ext4) for nothing in the common case.
     */
    private Path newRunDirectory() {
        return runsDir.resolve(UUID.randomUUID().toString());
    }

    /** The status file of a run: bubblewrap's JSON status, or the launcher's own report, written on descriptor 9. */
    static Path statusFile(Path runDir) {
        return runDir.resolveSibling(runDir.getFileName() + ".status");
    }

    private List<String> argv(PermissionProfile runProfile, SandboxLayout.Plan plan, Map<String, String> env,
                              Path cwd, List<String> program, ResourceLimits limits, Cgroups.RunGroup group,
                              String status, boolean viaBwrap, SandboxUser user) {
        Long cpu = limits.cpuTime() == null ? null
                : Math.max(1, (limits.cpuTime().toMillis() + 999) / 1000);
        Long blocks = limits.maxFileBytes() == null ? null : Math.max(1, (limits.maxFileBytes() + 511) / 512);
        Integer nofile = limits.maxOpenFiles();
        List<String> procs = group == null ? List.of() : group.procsFiles();
        if (!viaBwrap) {
            List<String> cmd = platform == SandboxPlatform.MACOS_SEATBELT
                    && runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED
                    ? SeatbeltProfile.argv(SeatbeltProfile.build(plan.mounts(), runProfile.network()), program)
                    : program;
            return Launcher.argv(new Launcher.Spec(shell, status, procs, cpu, blocks, nofile, List.of(), null, true,
                    cmd));
        }
        if (runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED) {
            String seccomp = seccompFiles.computeIfAbsent(runProfile.network(),
                    m -> SeccompFiles.ensure(stateDir, m).toString());
            List<String> bwrapArgv = BwrapCommand.argv(new BwrapCommand.Spec(preflight.bwrap(),
                    runProfile.network() == NetworkMode.RESTRICTED, preflight.proc(), plan.mounts(), scratchBytes,
                    3, Launcher.STATUS_FD, env, cwd.toString(), program, user.launchPrefix(), user.bwrapIdentity(),
                    group != null && group.limitsProcesses() ? List.of() : runLimits.inside(limits.maxProcesses())));
            return Launcher.argv(new Launcher.Spec(shell, status, procs, cpu, blocks, nofile, plan.pinnedDirs(),
                    plan.checkedDirs(), seccomp, false, bwrapArgv));
        }
        return Launcher.argv(new Launcher.Spec(shell, status, procs, cpu, blocks, nofile, List.of(), null, false,
                BwrapCommand.unsandboxedArgv(preflight.bwrap(), Launcher.STATUS_FD, env, cwd.toString(), program)));
    }

    /** The status file of a run, in its private directory (see {@link Launcher}). */

    private static final Pattern EXIT_CODE = Pattern.compile("\\{\\s*\"exit-code\"\\s*:\\s*-?\\d+\\s*}");

    /**
     * Tells a failed sandbox setup from the program's own result, from the run's private status channel only (see
     * {@link Launcher}): never from what the program printed or its exit code, which are the program's result even
     * when they look like a launcher or bubblewrap error.
     *
     * @param r         what the launch returned
     * @param status    the status file's content
     * @param viaBwrap  true when bubblewrap reported on the status descriptor, false when the launcher did
     * @param workspace the run's workspace root (a bubblewrap failure on a path in it is a concurrent change)
     * @return the program's result ({@code r}, or exit code 127 when bubblewrap could not execute the command)
     * @throws PolicyViolationException    when a path to be mounted changed during setup (nothing ran)
     * @throws BackendUnavailableException when the sandbox could not be set up (nothing ran)
     */
    static RunResult checkSetup(RunResult r, String status, boolean viaBwrap, Path workspace) {
        for (String line : status.lines().toList()) {
            if (line.startsWith(Launcher.FAILED + " ")) {
                String[] f = line.split(" ", 3);
                String reason = f.length > 2 ? f[2] : "unknown reason";
                if (f.length > 1 && f[1].equals(Launcher.CHANGED)) {
                    throw new PolicyViolationException("the sandbox was not started: " + reason + " (a program "
                            + "running in the same workspace may be swapping it for a link). Nothing ran.");
                }
                throw new BackendUnavailableException("the sandbox could not be set up: " + reason + ". Nothing ran.");
            }
        }
        boolean started = viaBwrap ? EXIT_CODE.matcher(status).find()
                : status.lines().anyMatch(Launcher.STARTED::equals);
        if (started || r.timedOut()) {
            return r;
        }
        if (!viaBwrap) {
            throw new BackendUnavailableException("the sandbox launcher ended before it started the program (exit "
                    + "code " + r.exitCode() + "). Nothing ran.");
        }
        // bubblewrap ended before it executed the program, so everything on stderr is bubblewrap's own.
        String line = r.stderr().lines().filter(l -> l.startsWith("bwrap: ")).findFirst().orElse("");
        if (line.startsWith("bwrap: execvp ")) {
            // The command could not be executed inside the sandbox: report it like a shell would.
            return new RunResult(r.stdout(), "command not found or not executable inside the sandbox\n", 127,
                    r.duration(), r.timedOut(), r.stdoutTruncated(), r.stderrTruncated());
        }
        if (line.contains("Race condition binding") || line.contains(workspace + "/")) {
            // What bubblewrap mounted was not the verified descriptor, or a destination in the workspace was no
            // longer what the plan saw (typically a link planted where a mount lands).
            throw new PolicyViolationException("the sandbox was not started: a path to be mounted changed during "
                    + "setup (a program running in the same workspace may be swapping it for a link). Nothing ran.");
        }
        LOG.warn("bubblewrap could not set up a sandbox: {}", line.isEmpty() ? "no message" : line.length() > 300
                ? line.substring(0, 300) + "..." : line);
        throw new BackendUnavailableException("the sandbox could not be set up (bubblewrap failed; the log has "
                + "the detail). Nothing ran.");
    }

    /**
     * A bare name is looked up on the run's own PATH, skipping directories the sandbox hides (their files are not
     * there for the program); a name with '/' is used as given, relative to the working directory.
     */
    static String resolveCommand(String cmd, String path, Path cwd, SandboxLayout.Plan plan) {
        if (cmd.contains("/")) {
            return cmd;
        }
        if (path != null) {
            for (String dir : path.split(":")) {
                if (dir.isEmpty() || !dir.startsWith("/")) {
                    continue;
                }
                Path candidate = Path.of(dir).resolve(cmd);
                java.io.File f = candidate.toFile(); // stats without building an exception per missing candidate
                if (!f.isFile() || !f.canExecute()) {
                    continue;
                }
                if (plan != null) {
                    try {
                        if (!plan.visible(candidate.toRealPath().toString())
                                || !plan.visible(candidate.toAbsolutePath().normalize().toString())) {
                            continue;
                        }
                    } catch (IOException e) {
                        continue;
                    }
                }
                return candidate.toString();
            }
        }
        throw new InvalidSpecException("command '" + cmd + "' was not found on the run's PATH");
    }

    private static ResourceLimits merge(ResourceLimits base, ResourceLimits run) {
        if (run == null || run.isEmpty()) {
            return base;
        }
        if (base.isEmpty()) {
            return run;
        }
        return new ResourceLimits(run.cpuTime() != null ? run.cpuTime() : base.cpuTime(),
                run.memoryBytes() != null ? run.memoryBytes() : base.memoryBytes(),
                run.maxFileBytes() != null ? run.maxFileBytes() : base.maxFileBytes(),
                run.maxOpenFiles() != null ? run.maxOpenFiles() : base.maxOpenFiles(),
                run.maxProcesses() != null ? run.maxProcesses() : base.maxProcesses());
    }

    private static void validateLimits(ResourceLimits limits) {
        if (limits.maxOpenFiles() != null && limits.maxOpenFiles() < MIN_OPEN_FILES) {
            throw new InvalidSpecException("maxOpenFiles (" + limits.maxOpenFiles() + ") must be at least "
                    + MIN_OPEN_FILES + ": the sandbox itself needs a few descriptors");
        }
    }

    private String limitsSupport() {
        return cgroups == null ? "no control groups" : cgroups.describe();
    }

    static Capabilities capabilities(SandboxPlatform platform, PermissionProfile profile, Cgroups cgroups) {
        return capabilities(platform, profile, cgroups, false);
    }

    static Capabilities capabilities(SandboxPlatform platform, PermissionProfile profile, Cgroups cgroups,
                                     boolean processesByRlimit) {
        Set<ResourceLimit> limits = EnumSet.of(ResourceLimit.CPU_TIME, ResourceLimit.FILE_SIZE,
                ResourceLimit.OPEN_FILES);
        if (cgroups != null && cgroups.memory()) {
            limits.add(ResourceLimit.MEMORY);
        }
        if (cgroups != null && cgroups.pids() || processesByRlimit && profile.enforcement()
                == PermissionProfile.Enforcement.MANAGED) {
            limits.add(ResourceLimit.PROCESSES);
        }
        Isolation isolation = switch (profile.enforcement()) {
            case MANAGED -> Isolation.OS_SANDBOX;
            case DISABLED -> Isolation.NONE;
            case EXTERNAL -> Isolation.EXTERNAL;
        };
        return Capabilities.builder()
                .isolation(isolation)
                .networkAllowed(profile.network() == NetworkMode.ENABLED)
                .readOnlyMount(profile.enforcement() == PermissionProfile.Enforcement.MANAGED)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(limits)
                .maxDiskBytes(false)
                .build();
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new CodeExecException("this SandboxEngine is closed");
        }
    }

    private static void restrict(Path dir) {
        try {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException | UnsupportedOperationException ignored) {
            // Not a POSIX file system: nothing to tighten.
        }
    }

    private void cleanupRoot() {
        try {
            if (ownsRoot) {
                deleteTree(sandboxRoot);
            } else {
                deleteTree(stateDir);
            }
        } catch (RuntimeException e) {
            LOG.warn("could not remove the sandbox root: {}", e.toString());
        }
    }

    private static void deleteTree(Path p) {
        if (p == null || !Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path x : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        } catch (IOException e) {
            throw new CodeExecException("could not remove " + p.getFileName() + ": " + e.getMessage(), e);
        }
    }

    /** Kills running sessions, removes every workspace, the engine's state and (when it created it) the root. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (ProgramSession s : List.copyOf(sessions)) {
            try {
                s.close();
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        try {
            codeWorkspaces.close();
        } catch (RuntimeException e) {
            failure = addTo(failure, e);
        }
        try {
            manager.close();
        } catch (RuntimeException e) {
            failure = addTo(failure, e);
        }
        launchers.shutdown();
        if (cgroups != null) {
            cgroups.close();
        }
        try {
            if (ownsRoot) {
                deleteTree(sandboxRoot);
            } else {
                deleteTree(stateDir);
                Files.deleteIfExists(sandboxRoot.resolve("workspaces"));
            }
        } catch (RuntimeException | IOException e) {
            failure = addTo(failure, e instanceof RuntimeException re ? re
                    : new CodeExecException("could not remove the sandbox root", e));
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException addTo(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    /** Builder for {@link SandboxEngine}. Every setting is optional. */
    public static final class Builder {
        private Path rootDir;
        private PermissionProfile profile;
        private ShellEnvironmentPolicy envPolicy;
        private NetworkMode network;
        private ResourceLimits limits;
        private PreflightMode preflightMode;
        private List<Path> inputRoots = List.of();
        private ArtifactService artifacts;
        private Integer maxOutputBytes;
        private Path bwrapPath;
        private Map<String, String> hostEnvironment;
        private Long scratchBytes;
        private SandboxPlatform platform;
        private Integer sandboxUid;
        private Integer sandboxGid;

        private Builder() {
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
        public Builder environmentPolicy(ShellEnvironmentPolicy policy) {
            this.envPolicy = policy;
            return this;
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

        /** Host directories whose files may be staged as inputs; default none. */
        public Builder inputRoots(List<Path> inputRoots) {
            this.inputRoots = List.copyOf(inputRoots);
            return this;
        }

        /**
         * The artifact store for {@code artifact://} inputs and saved outputs; default none. The root directory of a
         * {@link FileSystemArtifactService} is hidden from every sandbox (a no-access rule is added to the profile);
         * the location of any other store, or of a store the application uses without passing it here, must be
         * hidden with {@link PermissionProfile#withNoAccessPaths}.
         */
        public Builder artifactService(ArtifactService artifacts) {
            this.artifacts = artifacts;
            return this;
        }

        /** Bytes kept per output stream when a run does not say; default 1 MiB. */
        public Builder maxOutputBytes(int maxOutputBytes) {
            this.maxOutputBytes = maxOutputBytes;
            return this;
        }

        /** The bubblewrap executable; default the first of /usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap. */
        public Builder bwrapPath(Path bwrapPath) {
            this.bwrapPath = bwrapPath;
            return this;
        }

        /**
         * The host environment the {@link ShellEnvironmentPolicy} filters; default {@code System.getenv()}.
         */
        public Builder hostEnvironment(Map<String, String> hostEnvironment) {
            this.hostEnvironment = hostEnvironment;
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
