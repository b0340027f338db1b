package dev.codeexec.local;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.spi.host.HostRuns;
import dev.codeexec.spi.host.LauncherThreads;
import dev.codeexec.spi.host.ParentDeath;
import dev.codeexec.spi.host.PidNamespace;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.AbstractEngine;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs programs directly on this host. <strong>This is not a sandbox.</strong> Programs run as the JVM's user, with
 * its files, its network and (unless {@link RunProgramSpec#cleanEnv()}) its environment, secrets included. Use it
 * for trusted code, development and tests; give model-written code to the sandbox or container backends.
 *
 * <p>What it still guarantees: every path is checked by the workspace's path resolver; captured output is capped
 * per stream; a timeout kills the whole process tree (each run gets its own PID namespace where the host allows
 * it, so even detached daemons die) and returns promptly; after a run no process it started is left. Where the host
 * allows it:
 * <ul>
 *   <li><b>nothing outlives the JVM</b>: runs and sessions get a parent-death signal, so they die with the JVM that
 *       started them, even after a {@code kill -9} or a crash;</li>
 *   <li><b>processes are bounded by default</b>: at most {@value #DEFAULT_MAX_PROCESSES} processes and threads per
 *       run, in a control group of its own (which also gives the run one CPU share, however many processes it
 *       starts), so that a fork bomb stops at the bound instead of stalling the host. That needs control groups the
 *       JVM may create (root, or a delegated cgroup v2 subtree); {@code describe().enforcedLimits()} says whether
 *       this host has them (see {@link Builder#limits}).</li>
 * </ul>
 * Removing a workspace ({@code manager().cleanup}, an idle workspace reaped by a registry) stops its sessions
 * first: no program keeps running in a deleted directory.
 *
 * <p>The environment of a run follows a {@link ShellEnvironmentPolicy}, by default
 * {@link ShellEnvironmentPolicy#inheritAll()}: what a shell would see. A clean run gets {@code PATH}, {@code LANG},
 * its own variables and the workspace's {@code HOME} and {@code TMPDIR}.
 *
 * <pre>{@code
 * try (LocalEngine engine = LocalEngine.create()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("echo").args("hi").build());
 * }
 * }</pre>
 */
public final class LocalEngine extends AbstractEngine {

    private static final Logger LOG = LoggerFactory.getLogger(LocalEngine.class);

    /** The no-isolation warning is logged once per JVM, at the first engine. */
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    /** A missing process bound is logged once per JVM. */
    private static final AtomicBoolean UNBOUNDED_WARNED = new AtomicBoolean();

    /** The {@code PATH} of a clean environment: {@link ShellEnvironmentPolicy#CLEAN_PATH}. */
    public static final String CLEAN_PATH = ShellEnvironmentPolicy.CLEAN_PATH;

    /** Processes and threads a run may have by default, where the host can bound them: {@value}. */
    public static final int DEFAULT_MAX_PROCESSES = 1024;

    private final HostWorkspaceManager hostManager;
    private final WorkspaceManager manager = new SessionStoppingManager();
    private final HostWorkspaceFS fs;
    private final Path ownedBaseDir;
    /** The threads that fork runs: each lives as long as the processes it forked (their parent-death signal). */
    private final LauncherThreads launchers;
    private final Cgroups cgroups;
    private final HostRuns runs;
    private final Capabilities capabilities;
    private final ResourceLimits defaultLimits;
    /** Live sessions by workspace id, stopped before their workspace is removed. */
    private final Map<String, WorkspaceSessions> sessionsByWorkspace = new ConcurrentHashMap<>();

    private LocalEngine(Builder b) {
        super("LocalEngine", b, ShellEnvironmentPolicy.inheritAll(), null);
        Path base = b.rootDir;
        if (base == null) {
            try {
                base = Files.createTempDirectory("codeexec-local-");
            } catch (IOException e) {
                throw new CodeExecException("cannot create a temporary base directory: " + e.getMessage(), e);
            }
            this.ownedBaseDir = base;
        } else {
            this.ownedBaseDir = null;
        }
        this.hostManager = new HostWorkspaceManager(base);
        this.fs = HostWorkspaceFS.builder().hostPaths(hostManager::hostPath).inputRoots(inputRoots())
                .artifacts(artifactStore()).build();
        // Probed once, at the first engine, so that a host without them warns early.
        PidNamespace.wrapper();
        ParentDeath.wrapper();
        this.cgroups = Cgroups.detect();
        this.capabilities = capabilities(cgroups);
        try {
            capabilities.requireLimits(b.limits == null ? ResourceLimits.NONE : b.limits, limitsOwner());
        } catch (UnsupportedCapabilityException e) {
            closeQuietly();
            throw e;
        }
        this.defaultLimits = withDefaults(defaults(capabilities.enforcedLimits()), b.limits);
        this.launchers = new LauncherThreads("codeexec-local-launcher-",
                b.launcherKeepAlive == null ? LauncherThreads.DEFAULT_KEEP_ALIVE : b.launcherKeepAlive);
        this.runs = new HostRuns(launchers, cgroups);
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("LocalEngine runs code on this host WITHOUT isolation: programs can read and write your files, "
                    + "reach the network and, unless cleanEnv is set, see your environment. Use the sandbox or "
                    + "container backend for untrusted code.");
        }
        if (!capabilities.enforcedLimits().contains(ResourceLimit.PROCESSES) && b.limits == null
                && UNBOUNDED_WARNED.compareAndSet(false, true)) {
            LOG.warn("LocalEngine cannot bound the processes of a run on this host ({}): a fork bomb can exhaust the "
                    + "host. The bound needs control groups the JVM may create (root, or a delegated cgroup v2 "
                    + "subtree). See docs/backends.md", cgroups.describe());
        }
    }

    /** Undoes a failed build: the engine's control groups, workspaces and the base directory it created. */
    private void closeQuietly() {
        cgroups.close();
        hostManager.close();
        if (ownedBaseDir != null) {
            try {
                Files.deleteIfExists(ownedBaseDir);
            } catch (IOException e) {
                LOG.debug("could not remove the base directory: {}", e.toString());
            }
        }
    }

    /** What this host lets the local engine enforce: memory and processes through control groups, when it has them. */
    static Capabilities capabilities(Cgroups cgroups) {
        Set<ResourceLimit> limits = EnumSet.noneOf(ResourceLimit.class);
        if (cgroups.memory()) {
            limits.add(ResourceLimit.MEMORY);
        }
        if (cgroups.pids()) {
            limits.add(ResourceLimit.PROCESSES);
        }
        return Capabilities.builder()
                .isolation(Isolation.NONE)
                .networkAllowed(true)
                .readOnlyMount(false)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(limits)
                .diskQuota(false)
                .build();
    }

    /** The default bounds this host can enforce: processes. */
    private static ResourceLimits defaults(Set<ResourceLimit> enforced) {
        return enforced.contains(ResourceLimit.PROCESSES)
                ? ResourceLimits.builder().maxProcesses(DEFAULT_MAX_PROCESSES).build() : ResourceLimits.NONE;
    }

    /** The configured limits over the defaults, field by field; none at all for an empty value set on purpose. */
    private static ResourceLimits withDefaults(ResourceLimits defaults, ResourceLimits configured) {
        if (configured == null) {
            return defaults;
        }
        return configured.isEmpty() ? ResourceLimits.NONE : configured.withDefaults(defaults);
    }

    /** A local engine with defaults: workspaces under a new temporary directory, no artifact store. */
    public static LocalEngine create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public WorkspaceManager manager() {
        return manager;
    }

    @Override
    public WorkspaceFS fs() {
        return fs;
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        return runs.plan(fs.resolver(ws), spec, environment(), outputCap(spec), limitsFor(spec));
    }

    @Override
    protected ResourceLimits defaultLimits() {
        return defaultLimits;
    }

    @Override
    protected String limitsOwner() {
        return "LocalEngine on this host (" + cgroups.describe() + ")";
    }

    /** A session is registered with its workspace, whose removal stops it. */
    @Override
    protected ProgramSession startProgram(Workspace ws, RunProgramSpec spec) {
        WorkspaceSessions live = sessionsByWorkspace.computeIfAbsent(ws.id(), id -> new WorkspaceSessions());
        synchronized (live) {
            if (live.removed) {
                throw new WorkspaceGoneException("workspace '" + ws.id() + "' was removed");
            }
            ProgramSession s = super.startProgram(ws, spec);
            live.sessions.removeIf(x -> x.exitCode().isPresent());
            live.sessions.add(s);
            return s;
        }
    }

    /** Tests and diagnostics: the launcher threads alive now. */
    int launcherThreadCount() {
        return launchers.threadCount();
    }

    /** Stops every session, removes every workspace, and the base directory when the engine created it. */
    @Override
    protected void closeBackend() {
        RuntimeException failure = attempt(null, hostManager::close);
        launchers.shutdown();
        failure = attempt(failure, cgroups::close);
        if (ownedBaseDir != null) {
            failure = attempt(failure, () -> {
                try {
                    Files.deleteIfExists(ownedBaseDir);
                } catch (IOException e) {
                    throw new CodeExecException("could not remove the base directory", e);
                }
            });
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The sessions of one workspace; {@code removed} once its removal began (no session starts after it). Held
     * weakly: a session that was closed leaves the engine's own set of live sessions, and nothing here may keep it
     * (and its output buffer) from being collected; one that was not closed is still held by that set.
     */
    private static final class WorkspaceSessions {
        final Set<ProgramSession> sessions = Collections.newSetFromMap(new WeakHashMap<>());
        boolean removed;
    }

    /**
     * The host workspace manager, with one rule on top: removing a workspace stops its sessions first. A session
     * left running would keep writing into a deleted directory and still report "running" to whoever polls it.
     */
    private final class SessionStoppingManager implements WorkspaceManager {
        @Override
        public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
            requireOpen();
            return hostManager.createWorkspace(execId, policy);
        }

        @Override
        public void cleanup(Workspace workspace) {
            hostManager.hostPath(workspace); // refuses a workspace of another engine before anything is stopped
            WorkspaceSessions live = sessionsByWorkspace.computeIfAbsent(workspace.id(),
                    id -> new WorkspaceSessions());
            List<ProgramSession> stop;
            synchronized (live) {
                live.removed = true;
                stop = List.copyOf(live.sessions);
                live.sessions.clear();
            }
            RuntimeException failure = null;
            for (ProgramSession s : stop) {
                failure = attempt(failure, s::close);
            }
            try {
                hostManager.cleanup(workspace);
            } finally {
                sessionsByWorkspace.remove(workspace.id(), live);
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /**
     * Builder for {@link LocalEngine}; the common settings are those of {@link EngineBuilder}, with the environment
     * policy {@link ShellEnvironmentPolicy#inheritAll()} by default.
     */
    public static final class Builder extends EngineBuilder<Builder> {
        private Path rootDir;
        private ResourceLimits limits;
        private Duration launcherKeepAlive;

        private Builder() {
        }

        /**
         * The engine's directory: each workspace is a folder in it (created mode 0700 when missing). Default: a new
         * temporary directory, removed on {@link LocalEngine#close()}; a directory given here stays, and only the
         * workspaces the engine created in it are removed. The same setting as
         * {@code SandboxEngine.Builder.rootDir}.
         */
        public Builder rootDir(Path rootDir) {
            this.rootDir = rootDir;
            return this;
        }

        /**
         * Limits applied to every run (a run's own limits override them field by field). <b>Default: bounded</b> —
         * {@value LocalEngine#DEFAULT_MAX_PROCESSES} processes and threads per run where this host can enforce it
         * ({@code describe().enforcedLimits()} contains {@link ResourceLimit#PROCESSES}); limits set here replace
         * that default field by field, and {@link ResourceLimits#NONE} turns it off. The local engine enforces
         * {@link ResourceLimit#PROCESSES} and {@link ResourceLimit#MEMORY} through control groups only (root, or a
         * delegated cgroup v2 subtree): the build fails with {@link UnsupportedCapabilityException} when a limit set
         * here cannot be enforced on this host, and so does a run that asks for one.
         */
        public Builder limits(ResourceLimits limits) {
            this.limits = limits;
            return this;
        }

        /** Tests: how long an idle launcher thread without a live process stays; default 60 s. */
        Builder launcherKeepAlive(Duration keepAlive) {
            this.launcherKeepAlive = keepAlive;
            return this;
        }

        /**
         * The old name of {@link #rootDir(Path)}.
         *
         * @deprecated use {@link #rootDir(Path)}, the name every engine uses
         */
        @Deprecated
        public Builder baseDir(Path baseDir) {
            return rootDir(baseDir);
        }

        /** The same as {@link #hostEnvironment}: the environment runs inherit when they do not ask for a clean one. */
        public Builder baseEnvironment(Map<String, String> baseEnvironment) {
            return hostEnvironment(baseEnvironment);
        }

        public LocalEngine build() {
            return new LocalEngine(this);
        }
    }
}
