package dev.codeexec.spi;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeExecutor;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.ArtifactSource;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.workspace.EngineFileImport;
import dev.codeexec.workspace.RunHistory;
import dev.codeexec.workspace.WorkspaceRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The engine support layer: what every backend's engine needs and the core writes once. A backend extends it,
 * supplies {@link #prepare} (turn a spec into a {@link PreparedRun} on its {@link ProcessChannel}), its
 * {@link #manager()}, {@link #fs()} and {@link #describe()}, and releases its own resources in
 * {@link #closeBackend}.
 *
 * <p>What it does for the backend:
 * <ul>
 *   <li>runs and interactive sessions through {@link ProgramRuns}, with {@link PreparedRun#check} and exactly one
 *       {@link PreparedRun#release}; sessions are tracked so that {@link #close()} stops them;</li>
 *   <li>long output: a stream that outgrows the output cap keeps its start and end in the result and is saved
 *       whole (up to {@link EngineBuilder#maxSavedOutputBytes}) as {@code runs/<run>/stdout} or {@code stderr},
 *       through the engine's file system, on every backend whose file system is an {@link EngineFileImport};</li>
 *   <li>the run history: after runs through {@link #runner()} and {@link #interactive()}, the oldest run folders of
 *       the workspace beyond {@link EngineBuilder#runHistory} are deleted, never one whose run or session goes on
 *       ({@link RunHistory});</li>
 *   <li>the open check ({@link #requireOpen()}), the output cap ({@link #outputCap}) and the default resource
 *       limits, checked against {@link dev.codeexec.engine.Capabilities capabilities} ({@link #limitsFor});</li>
 *   <li>{@link #executeCode(CodeExecutionInput)}: code blocks in the workspace of the input's execution id (kept
 *       until close) or in a temporary one;</li>
 *   <li>with {@link EngineBuilder#warmPython}, python blocks in a pre-started interpreter of the workspace (one per
 *       block, never shared), where {@link #warmSpareKey} allows it;</li>
 *   <li>{@link #close()}: idempotent; sessions, the code workspaces, then the backend's resources, every step run
 *       even when one fails (failures are thrown together, the first with the others suppressed).</li>
 * </ul>
 * Environments come from {@link RunEnvironment}, commands are found with {@link CommandLookup}. An engine whose python
 * blocks run as cells of a stateful interpreter extends {@link InterpreterEngine} instead.
 */
public abstract class AbstractEngine implements Engine, CodeExecutor, ArtifactSource {

    private final String displayName;
    /** The egress policy and proxy settings of the builder (see {@link EngineBuilder#egress}). */
    private final EgressPolicy egressPolicy;
    private final EgressProxy.Builder egressProxy;
    private final int maxOutputBytes;
    private final ResourceLimits defaultLimits;
    private final List<Path> inputRoots;
    private final ArtifactService artifacts;
    private final RunEnvironment environment;
    private final Set<ProgramSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final RunHistory history;
    private final long maxSavedOutputBytes;
    /** The output saving of the run going on in this thread through {@link #runner()}; claimed by {@link #run}. */
    private final ThreadLocal<OutputSaving> pendingSaving = new ThreadLocal<>();
    /** The warm python path, or null when off ({@link EngineBuilder#warmPython}). */
    private final WarmPython warm;
    private final ProgramRunner runner = (ws, spec) -> {
        discardSpare(ws);
        OutputSaving saving = outputSaving();
        if (saving != null) {
            pendingSaving.set(saving);
        }
        try {
            RunResult r = runProgram(ws, spec);
            return saving == null ? r : saving.save(ws, r);
        } finally {
            if (saving != null) {
                pendingSaving.remove();
                saving.discard();
            }
            trimHistory(ws);
        }
    };
    private final InteractiveProgramRunner interactive = (ws, spec) -> {
        discardSpare(ws);
        ProgramSession s = startProgram(ws, spec);
        trimHistory(ws);
        return s;
    };
    private final WorkspaceRegistry codeWorkspaces;

    /** {@value} bytes: how much of a long output stream is saved in the run's folder by default (16 MiB). */
    public static final long DEFAULT_MAX_SAVED_OUTPUT_BYTES = 16L << 20;

    /**
     * @param displayName   the engine's name in messages, for example {@code LocalEngine}
     * @param settings      the common settings from the backend's builder
     * @param defaultPolicy the environment policy when the builder set none
     * @param defaultLimits limits of every run (a run's own override them field by field); null for none
     * @throws InvalidSpecException when the output cap is not positive
     */
    protected AbstractEngine(String displayName, EngineBuilder<?> settings, ShellEnvironmentPolicy defaultPolicy,
                             ResourceLimits defaultLimits) {
        this.displayName = displayName;
        requireEgressSupport(displayName, settings);
        this.egressPolicy = settings.egressPolicy();
        this.egressProxy = settings.egressProxy();
        Integer cap = settings.maxOutputBytes();
        this.maxOutputBytes = cap == null ? BoundedOutput.DEFAULT_CAP : cap;
        if (this.maxOutputBytes <= 0) {
            throw new InvalidSpecException("maxOutputBytes (" + cap + ") must be positive");
        }
        this.defaultLimits = defaultLimits == null ? ResourceLimits.NONE : defaultLimits;
        this.inputRoots = settings.inputRoots();
        this.artifacts = settings.artifacts();
        this.environment = settings.environment(defaultPolicy);
        this.history = new RunHistory(settings.runHistory() == null ? RunHistory.DEFAULT_KEEP : settings.runHistory());
        Long saved = settings.maxSavedOutputBytes();
        this.maxSavedOutputBytes = saved == null ? DEFAULT_MAX_SAVED_OUTPUT_BYTES : saved;
        if (this.maxSavedOutputBytes < 0) {
            throw new InvalidSpecException("maxSavedOutputBytes (" + saved + ") must not be negative");
        }
        this.codeWorkspaces = WorkspaceRegistry.builder(this).build();
        this.warm = settings.warmPythonOn() ? new WarmPython(this) : null;
    }

    /** The egress policy the engine was built with, or null (see {@link EngineBuilder#egress}). */
    protected final EgressPolicy egressPolicy() {
        return egressPolicy;
    }

    /** The settings of the egress proxy an engine with {@link EgressControl#PROXY} builds and owns. */
    protected final EgressProxy.Builder egressProxySettings() {
        return egressProxy;
    }

    /** Fails closed: a policy this backend cannot enforce, or proxy settings it has no proxy for. */
    private static void requireEgressSupport(String displayName, EngineBuilder<?> settings) {
        EgressControl control = settings.egressControl();
        if (settings.egressPolicy() != null && control == EgressControl.NONE) {
            throw new UnsupportedCapabilityException(displayName + " cannot enforce an egress policy: its programs "
                    + "have no boundary a proxy could be the only way out of. Use the sandbox or container engine "
                    + "(or E2B, for the rules it can express); see docs/network.md");
        }
        if (settings.egressProxySet() && (settings.egressPolicy() == null || control != EgressControl.PROXY)) {
            throw new InvalidSpecException(settings.egressPolicy() == null
                    ? "egressProxy(...) configures the proxy of an egress policy; set one with egress(policy)"
                    : displayName + " has no egress proxy of its own: egressProxy(...) does not apply");
        }
    }

    /**
     * Plans one run: checks the spec for this workspace, builds the argv, environment and working directory, and
     * names the channel. Nothing may be started yet; per-run resources it creates are released by the returned
     * run's {@link PreparedRun#release()}, or by this method when it throws.
     */
    protected abstract PreparedRun prepare(Workspace ws, RunProgramSpec spec);

    /** Releases the backend's own resources (workspaces, threads, state directories) at {@link #close()}. */
    protected abstract void closeBackend();

    /** The artifact store the engine was configured with. */
    @Override
    public Optional<ArtifactService> artifacts() {
        return Optional.ofNullable(artifacts);
    }

    /** The artifact store, or null: for the engine's file system. */
    protected final ArtifactService artifactStore() {
        return artifacts;
    }

    /** Host directories whose files may be staged as inputs. */
    protected final List<Path> inputRoots() {
        return inputRoots;
    }

    /** How runs' environments are built. */
    protected final RunEnvironment environment() {
        return environment;
    }

    /** The environment policy of every run. */
    public ShellEnvironmentPolicy environmentPolicy() {
        return environment.policy();
    }

    @Override
    public ProgramRunner runner() {
        return runner;
    }

    /** Sessions when {@link dev.codeexec.engine.Capabilities#interactive()}. */
    @Override
    public Optional<InteractiveProgramRunner> interactive() {
        return describe().interactive() ? Optional.of(interactive) : Optional.empty();
    }

    /** A run through {@link #prepare}; backends override it to wrap a run (a per-workspace lock, say). */
    protected RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        requireOpen();
        return run(prepare(ws, spec));
    }

    /** A session through {@link #prepare}; backends override it to wrap the start. */
    protected ProgramSession startProgram(Workspace ws, RunProgramSpec spec) {
        requireOpen();
        return start(prepare(ws, spec));
    }

    /**
     * Runs a prepared run to completion or timeout, checks its result and releases it. Through {@link #runner()}, a
     * stream that outgrows the output cap is saved whole in the run's folder ({@link #outputSaving}).
     */
    protected final RunResult run(PreparedRun run) {
        String folder = runFolder(run);
        history.started(folder);
        OutputSaving saving = pendingSaving.get();
        if (saving != null && !saving.claim(folder)) {
            saving = null;
        }
        try {
            return run.check(saving == null ? ProgramRuns.run(run.channel(), run.launch())
                    : ProgramRuns.run(run.channel(), run.launch(), saving.out, saving.err));
        } finally {
            history.finished(folder);
            run.release();
        }
    }

    /** Starts a prepared run as a tracked session; it is released when the session is closed. */
    protected final ProgramSession start(PreparedRun run) {
        String folder = runFolder(run);
        history.started(folder);
        ProgramSession s;
        try {
            s = ProgramRuns.startSession(run.channel(), run.launch(), UUID.randomUUID().toString());
        } catch (RuntimeException | Error e) {
            history.finished(folder);
            run.release();
            throw e;
        }
        return TrackedSession.track(s, sessions, () -> {
            history.finished(folder);
            run.release();
        });
    }

    /**
     * How a run through {@link #runner()} saves a stream that outgrows the output cap: spooled on this host, then
     * imported into {@code runs/<run>/} through the engine's file system when it is an {@link EngineFileImport}
     * (every file system of the core is). Null, and nothing is saved, when saving is off
     * ({@link EngineBuilder#maxSavedOutputBytes} 0), when run folders are deleted once a run is over (a run history
     * of 0), or when the file system cannot import.
     */
    OutputSaving outputSaving() {
        if (maxSavedOutputBytes == 0 || history.keep() == 0 || !(fs() instanceof EngineFileImport files)) {
            return null;
        }
        return new OutputSaving(files, maxSavedOutputBytes);
    }

    /** The name of the run's folder under {@code runs/}; null when it has none. */
    private static String runFolder(PreparedRun run) {
        return run.runFolder();
    }

    /** The warm path's spares: a run folder in use (see {@link RunHistory}). */
    final void runStarted(String folder) {
        history.started(folder);
    }

    /** The warm path's spares: a run folder no longer in use. */
    final void runFinished(String folder) {
        history.finished(folder);
    }

    /** The warm path's blocks: trims the workspace's run history after a run. */
    final void trimHistoryOf(Workspace ws) {
        trimHistory(ws);
    }

    /**
     * Whether, and on what terms, a warm python spare ({@link EngineBuilder#warmPython}) may serve the workspace: null
     * when it may not; otherwise a value that a spare keeps from its start and that must still be equal at the
     * hand-off, else the spare is discarded and the block runs fresh. It stands for everything the engine's
     * {@link #prepare} takes from the workspace's state beyond the spec (read-only stages, protected names, the
     * host's layout): where those changed, a spare's boundary is no longer the one a fresh run would get.
     *
     * <p>The default allows spares only on engines without a boundary ({@link Isolation#NONE}), whose runs depend on
     * nothing but the spec; an engine with a boundary overrides it once it can tell when its plan of a workspace
     * changes.
     */
    protected Object warmSpareKey(Workspace ws) {
        return describe().isolation() == Isolation.NONE ? Boolean.TRUE : null;
    }

    /** The warm python path, or null when off (for tests). */
    final WarmPython warmPython() {
        return warm;
    }

    /** Another program runs or starts in the workspace: its warm spare, if any, is stale. */
    private void discardSpare(Workspace ws) {
        if (warm != null) {
            warm.discard(ws.id());
        }
    }

    /**
     * Python blocks that ran in a warm interpreter ({@link EngineBuilder#warmPython}) since the engine was built; 0
     * when the warm path is off. The other blocks ran in a fresh process.
     */
    public final long warmPythonBlocks() {
        return warm == null ? 0 : warm.warmBlocks();
    }

    /** After a run or a session start: trims the workspace's run history (see {@link RunHistory}). */
    private void trimHistory(Workspace ws) {
        if (!closed.get()) {
            history.ran(fs(), ws);
        }
    }

    /**
     * The run's limits over the engine's defaults, field by field.
     *
     * @throws dev.codeexec.engine.UnsupportedCapabilityException when the engine cannot enforce one of them
     */
    protected final ResourceLimits limitsFor(RunProgramSpec spec) {
        ResourceLimits defaults = defaultLimits();
        ResourceLimits limits = spec.limits() == null ? defaults : spec.limits().withDefaults(defaults);
        describe().requireLimits(limits, limitsOwner());
        return limits;
    }

    /** Who cannot enforce a limit, in the refusal: the display name; a backend may add why. */
    protected String limitsOwner() {
        return displayName;
    }

    /**
     * The engine's default limits: those given to the constructor. A backend whose defaults depend on what the host
     * can enforce (known only after its own set-up) overrides it.
     */
    protected ResourceLimits defaultLimits() {
        return defaultLimits;
    }

    /** Bytes kept per stream for this run: its own cap, or the engine's. */
    protected final int outputCap(RunProgramSpec spec) {
        return spec.maxOutputBytes() > 0 ? spec.maxOutputBytes() : maxOutputBytes;
    }

    /** @throws CodeExecException when the engine is closed */
    protected final void requireOpen() {
        if (closed.get()) {
            throw new CodeExecException("this " + displayName + " is closed");
        }
    }

    /** True once {@link #close()} started. */
    protected final boolean isClosed() {
        return closed.get();
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

    /** Runs the blocks as scripts ({@link BlockPrograms}); python ones in a warm interpreter when that is on. */
    @Override
    public CodeExecutionResult executeCode(Workspace ws, CodeExecutionInput input) {
        return warm == null ? BlockPrograms.execute(this, ws, input) : BlockPrograms.execute(this, ws, input, warm);
    }

    /** Kills running sessions, removes the code workspaces, then closes the backend. Idempotent. */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        if (warm != null) {
            failure = attempt(failure, warm::close);
        }
        for (ProgramSession s : List.copyOf(sessions)) {
            failure = attempt(failure, s::close);
        }
        failure = attempt(failure, codeWorkspaces::close);
        failure = attempt(failure, this::closeBackend);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Runs one step of a close; its failure is added to {@code failure} (the first failure, with later ones
     * suppressed). For {@link #closeBackend} implementations that release several resources, and for the classes
     * that open a backend's resources together and close them when an open fails part-way.
     */
    public static RuntimeException attempt(RuntimeException failure, Runnable step) {
        try {
            step.run();
            return failure;
        } catch (RuntimeException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
            return failure;
        }
    }
}
