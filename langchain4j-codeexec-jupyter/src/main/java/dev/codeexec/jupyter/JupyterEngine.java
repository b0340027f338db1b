package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.HostRunPlace;
import dev.codeexec.spi.host.HostRuns;
import dev.codeexec.spi.host.LauncherThreads;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.InterpreterEngine;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.FileTrees;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * Runs python code cells in a real Jupyter kernel (ipykernel), one per workspace, spoken to over the Jupyter
 * messaging protocol on ZeroMQ. <strong>This is not a sandbox.</strong> The kernel is a Python process on this host
 * with the JVM user's rights: its code can read and write your files and reach the network. Run it inside a sandbox
 * or container (or give untrusted code to those backends) when you do not trust the code.
 *
 * <p>What it is for: a notebook-like conversation. A workspace's kernel starts with its first python cell and is
 * reused by the next ones, so variables, imports and loaded data persist; {@link #restartKernel} starts afresh.
 * Cells run from the workspace's {@code work/} directory (as the default code path does). A cell's result has its
 * streams, its value's {@code text/plain} and its traceback, in arrival order; images and other rich outputs are
 * saved under {@code out/} ({@code out/display_<n>.<ext>}) and returned with the files code wrote there. Blocks in
 * other languages (bash) run as scripts, as on every engine.
 *
 * <p>Limits of a cell: past its timeout it is interrupted ({@code interrupt_request}, then SIGINT); a kernel that does
 * not return to idle is stopped and the result says the state was lost. A kernel that dies (its process ended, or it
 * stopped answering heartbeats) is reported in the result, and the next cell starts a fresh one. Output is capped as
 * on every backend. {@link #close()} shuts every kernel down (a {@code shutdown_request}, then a kill of its process
 * tree); with an {@linkplain Builder#idleTimeout idle timeout}, a kernel idle that long is stopped, and the next
 * cell's result says its state is gone. Where util-linux allows, kernels run in their own PID namespace with a parent-death signal, so none outlives
 * a JVM that crashed.
 *
 * <p>Programs ({@link #runner()}, sessions) and files ({@link #fs()}) work on the same workspace directory as on the
 * local engine, and the {@link Capabilities} are the local engine's: no isolation.
 *
 * <p>The kernel's environment follows the engine's {@link ShellEnvironmentPolicy}, by default
 * {@link ShellEnvironmentPolicy#sandboxDefault()}: core variables without likely credentials, plus the workspace
 * variables, with {@code HOME} and {@code TMPDIR} inside the workspace. The Python that runs kernels is the one
 * {@linkplain Builder#python configured}, else the first {@code python3} (on the kernel environment's {@code PATH},
 * then the system's) that can import ipykernel.
 *
 * <pre>{@code
 * try (JupyterEngine engine = JupyterEngine.create()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "x = 6 * 7")));
 *     CodeExecutionResult r = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "x")));
 *     // r.output() is "42\n"
 * }
 * }</pre>
 *
 * <h2>Threads and locks</h2>
 * Each kernel has one socket reader thread ({@code codeexec-jupyter-io-*}, see {@link KernelClient}) that owns its
 * sockets and never runs caller code; callers wait on their own queues. Kernels are forked from the engine's
 * long-lived launcher threads ({@code codeexec-jupyter-launcher-*}), because a parent-death signal watches the thread
 * that forked. Per workspace, one lock serialises the cells, starts and restarts of that workspace
 * ({@link KernelSlot}); different workspaces run in parallel. The lock order is: the slot table (a concurrent map,
 * never held while waiting), then one slot's lock; no lock is held across two workspaces.
 */
public final class JupyterEngine extends InterpreterEngine {

    private static final Logger LOG = LoggerFactory.getLogger(JupyterEngine.class);

    /** The placeholder in a {@linkplain Builder#kernelCommand kernel command} for the connection file's path. */
    public static final String CONNECTION_FILE = "{connection_file}";

    /** {@value} seconds: how long a kernel may take to start and answer, by default. */
    public static final int DEFAULT_START_TIMEOUT_SECONDS = 30;
    /** {@value} seconds: how long an interrupted cell may take to stop, per attempt, by default. */
    public static final int DEFAULT_INTERRUPT_GRACE_SECONDS = 5;
    /** {@value} ms: the heartbeat period, by default. */
    public static final int DEFAULT_HEARTBEAT_INTERVAL_MILLIS = 1000;
    /** {@value} seconds: no heartbeat echo for this long means the kernel is dead, by default. */
    public static final int DEFAULT_HEARTBEAT_TIMEOUT_SECONDS = 10;

    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private static final Capabilities CAPABILITIES = Capabilities.builder()
            .isolation(Isolation.NONE)
            .networkAllowed(true)
            .readOnlyMount(false)
            .streaming(true)
            .supportsCleanEnv(true)
            .interactive(true)
            .enforcedLimits(Set.of())
            .diskQuota(false)
            .statefulCells(true)
            .build();

    private final HostWorkspaceManager hostManager;
    private final WorkspaceManager manager;
    private final HostWorkspaceFS fs;
    private final Path ownedBaseDir;
    private final Path stateDir;
    private final ObjectMapper json = new ObjectMapper();
    /** Kernels are forked here: their parent-death signal is tied to the forking thread (see LauncherThreads). */
    private final LauncherThreads launchers = new LauncherThreads("codeexec-jupyter-launcher-",
            LauncherThreads.DEFAULT_KEEP_ALIVE);
    private final Map<String, KernelSlot> slots = new ConcurrentHashMap<>();
    private final DisplayFiles displays;
    private final AtomicInteger kernelCount = new AtomicInteger();
    private final KernelTimings timings;
    private final KernelCommand command;
    /** The idle timeout's timer, or null without one. */
    private final IdleStops idle;
    private final Object lazyLock = new Object();
    /** Created with the first kernel. Guarded by {@code lazyLock}. */
    private ZContext zmq;

    private JupyterEngine(Builder b) {
        super("JupyterEngine", b, ShellEnvironmentPolicy.sandboxDefault(), null);
        this.timings = KernelTimings.of(b.startTimeout, b.interruptGrace, b.heartbeatInterval, b.heartbeatTimeout);
        this.command = new KernelCommand(b.python, b.kernelCommand);
        this.idle = b.idleTimeout == null ? null : new IdleStops("codeexec-jupyter-idle", b.idleTimeout);
        Path base = b.rootDir;
        try {
            this.stateDir = Files.createTempDirectory("codeexec-jupyter-"); // mode 0700: it holds connection files
            if (base == null) {
                base = Files.createTempDirectory("codeexec-jupyter-ws-");
                this.ownedBaseDir = base;
            } else {
                this.ownedBaseDir = null;
            }
        } catch (IOException e) {
            throw new CodeExecException("cannot create the engine's directories: " + e.getMessage(), e);
        }
        this.hostManager = new HostWorkspaceManager(base);
        this.manager = new KernelWorkspaces();
        this.fs = HostWorkspaceFS.builder().hostPaths(hostManager::hostPath).inputRoots(inputRoots())
                .artifacts(artifactStore()).build();
        this.displays = new DisplayFiles(fs);
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("JupyterEngine runs kernels and programs on this host WITHOUT isolation: code can read and write "
                    + "your files and reach the network. Use the sandbox or container backend for untrusted code.");
        }
    }

    /** An engine with defaults: workspaces under a new temporary directory, Python found by probing. */
    public static JupyterEngine create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "jupyter";
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
        return CAPABILITIES;
    }

    /**
     * The workspace's kernel, for {@link #executeCode(Workspace, CodeExecutionInput)}: it starts with the first python
     * cell, bounded by {@linkplain Builder#kernelStartTimeout its own timeout}
     * ({@link BackendUnavailableException} when none can be started); rich outputs are saved under {@code out/}.
     */
    @Override
    protected CellRunner cells(Workspace ws) {
        fs.resolver(ws); // the workspace must still be there
        return (code, timeout, cap) -> {
            KernelSlot.Outcome o = slot(ws).run(code, timeout, cap, () -> displays.of(ws));
            return new BlockPrograms.Outcome(o.text(), o.exitCode(), o.timedOut(), o.truncated());
        };
    }

    @Override
    protected String interpreterName() {
        return "a Jupyter kernel";
    }

    /**
     * Stops the workspace's kernel (a {@code shutdown_request}, then a kill if it does not exit) and starts a fresh
     * one, waiting until it answers. Variables and imports are gone afterwards; files stay. A cell running meanwhile
     * ends with a result that says the kernel was lost.
     *
     * @throws BackendUnavailableException when the new kernel cannot be started
     */
    public void restartKernel(Workspace ws) {
        requireOpen();
        fs.resolver(ws);
        slot(ws).restart();
    }

    /** The workspace's live kernel's connection file (its processes' command lines name it), or null: for tests. */
    Path kernelConnectionFile(Workspace ws) {
        KernelSlot s = slots.get(ws.id());
        Kernel k = s == null ? null : s.current();
        return k == null || !k.alive() ? null : k.connectionFile();
    }

    /** The workspace's live kernel, or null: for tests. */
    Kernel kernel(Workspace ws) {
        KernelSlot s = slots.get(ws.id());
        return s == null ? null : s.current();
    }

    /** Where connection files are written: for tests. */
    Path stateDir() {
        return stateDir;
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        limitsFor(spec);
        // Programs run as on the local engine: plain host processes in the workspace directory.
        return HostRuns.prepare(fs.resolver(ws), spec, environment(), outputCap(spec));
    }

    /** Shuts every kernel down (in parallel, bounded), then removes the workspaces and the engine's directories. */
    @Override
    protected void closeBackend() {
        RuntimeException failure = null;
        List<KernelSlot> all = new ArrayList<>(slots.values());
        slots.clear();
        List<KernelRequest> shutdowns = new ArrayList<>();
        for (KernelSlot s : all) {
            shutdowns.add(s.beginClose());
        }
        for (int i = 0; i < all.size(); i++) {
            KernelSlot s = all.get(i);
            KernelRequest r = shutdowns.get(i);
            failure = attempt(failure, () -> s.finishClose(r));
        }
        launchers.shutdown();
        if (idle != null) {
            idle.close();
        }
        synchronized (lazyLock) {
            if (zmq != null) {
                ZContext z = zmq;
                failure = attempt(failure, z::close);
            }
        }
        failure = attempt(failure, hostManager::close);
        failure = attempt(failure, () -> FileTrees.deleteTree(stateDir));
        if (ownedBaseDir != null) {
            failure = attempt(failure, () -> FileTrees.deleteTree(ownedBaseDir));
        }
        if (failure != null) {
            throw failure;
        }
    }

    // ---- kernels ----

    private KernelSlot slot(Workspace ws) {
        KernelSlot s = slots.computeIfAbsent(ws.id(), id -> new KernelSlot(id, () -> startKernel(ws), json,
                timings.interruptGrace(), idle));
        if (isClosed()) {
            // Created after close() emptied the table: close it, so no kernel starts in it.
            slots.remove(ws.id(), s);
            s.close();
            requireOpen();
        }
        return s;
    }

    private Kernel startKernel(Workspace ws) {
        requireOpen();
        Kernel.Settings settings;
        HostKernelProcess.Host host;
        synchronized (lazyLock) {
            settings = new Kernel.Settings(zmq(), json, timings.start(), timings.heartbeatInterval(),
                    timings.heartbeatTimeout());
            host = new HostKernelProcess.Host(json, stateDir, this::kernelArgv,
                    HostProcessChannel.of(!HostLaunchers.get().pidNamespace().isEmpty()).startingOn(launchers),
                    HostLaunchers.get().kernelPrefix());
        }
        HostRunPlace place = HostRunPlace.of(fs.resolver(ws), RunProgramSpec.builder("python3").cwd("work").build());
        // The one source of the environment of code (RunEnvironment): every cell of this kernel sees what a run sees.
        Map<String, String> env = new TreeMap<>(environment().forInterpreter(
                RunEnvironment.runtimeVariables(place.root().toString(), place.runDir(), true)));
        if (HostLaunchers.get().parentDeath().isEmpty()) {
            // Without a parent-death signal, ipykernel's own check: it exits when re-parented to init.
            env.put("JPY_PARENT_PID", Long.toString(ProcessHandle.current().pid()));
        }
        String label = ws.id() + "-k" + kernelCount.incrementAndGet();
        String cwd = place.cwd().toString();
        Kernel k = Kernel.start(settings, label, () -> new HostKernelProcess(host, label, cwd, env));
        if (isClosed()) {
            // close() ran while this kernel started and may have missed it.
            k.stop(json, "the engine was closed while the kernel started");
            throw new CodeExecException("this JupyterEngine is closed");
        }
        return k;
    }

    /** The engine's jeromq context, created with the first kernel. Caller holds {@code lazyLock}. */
    private ZContext zmq() {
        if (zmq == null) {
            requireOpen();
            zmq = KernelContexts.create("codeexec-jupyter-zmq-");
        }
        return zmq;
    }

    /** The kernel's argv template: the configured command, or the located Python's ipykernel launcher. */
    private List<String> kernelArgv() {
        return command.argv(() -> environment().forInterpreter(Map.of()));
    }

    /** The host workspaces, whose removal also stops the workspace's kernel. */
    private final class KernelWorkspaces implements WorkspaceManager {
        @Override
        public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
            requireOpen();
            return hostManager.createWorkspace(execId, policy);
        }

        /** Stops the workspace's kernel (gracefully, bounded), then removes the workspace. Idempotent. */
        @Override
        public void cleanup(Workspace workspace) {
            KernelSlot s = slots.remove(workspace.id());
            displays.forget(workspace.id());
            RuntimeException failure = null;
            if (s != null) {
                failure = attempt(null, s::close);
            }
            failure = attempt(failure, () -> hostManager.cleanup(workspace));
            if (failure != null) {
                throw failure;
            }
        }
    }

    /**
     * Builder for {@link JupyterEngine}; the common settings are those of {@link EngineBuilder}, with the environment
     * policy {@link ShellEnvironmentPolicy#sandboxDefault()} by default.
     */
    public static final class Builder extends EngineBuilder<Builder> {
        private Path rootDir;
        private String python;
        private List<String> kernelCommand;
        private Duration startTimeout;
        private Duration interruptGrace;
        private Duration heartbeatInterval;
        private Duration heartbeatTimeout;
        private Duration idleTimeout;

        private Builder() {
        }

        /**
         * The engine's directory: each workspace is a folder in it. Default: a new temporary directory, removed on
         * {@link JupyterEngine#close()}. The same setting as {@code SandboxEngine.Builder.rootDir}.
         */
        public Builder rootDir(Path rootDir) {
            this.rootDir = rootDir;
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

        /**
         * The Python that runs kernels ({@code -m ipykernel_launcher}): an absolute path, or a name looked up on the
         * kernel environment's {@code PATH}. It must import ipykernel. Default: the first {@code python3} on that
         * {@code PATH}, then {@code /usr/bin/python3}, {@code /usr/local/bin/python3}, {@code /bin/python3}, that can.
         */
        public Builder python(String python) {
            this.python = python;
            return this;
        }

        /**
         * The whole kernel command, as a kernelspec's {@code argv}, with {@value JupyterEngine#CONNECTION_FILE} where
         * the connection file goes, for example {@code [/opt/venv/bin/python, -m, ipykernel_launcher, -f,
         * {connection_file}]}. Replaces {@link #python}; the kernel must be a Python kernel.
         */
        public Builder kernelCommand(List<String> argv) {
            this.kernelCommand = argv == null ? null : List.copyOf(argv);
            return this;
        }

        /** How long a kernel may take to start and answer; default {@value #DEFAULT_START_TIMEOUT_SECONDS} s. */
        public Builder kernelStartTimeout(Duration timeout) {
            this.startTimeout = timeout;
            return this;
        }

        /**
         * How long an interrupted cell may take to return to idle, per attempt (the interrupt request, then SIGINT),
         * before the kernel is stopped; default {@value #DEFAULT_INTERRUPT_GRACE_SECONDS} s.
         */
        public Builder interruptGrace(Duration grace) {
            this.interruptGrace = grace;
            return this;
        }

        /** The heartbeat period; default {@value #DEFAULT_HEARTBEAT_INTERVAL_MILLIS} ms. */
        public Builder heartbeatInterval(Duration interval) {
            this.heartbeatInterval = interval;
            return this;
        }

        /**
         * How long a kernel may leave heartbeats unanswered before it is declared dead and killed; default
         * {@value #DEFAULT_HEARTBEAT_TIMEOUT_SECONDS} s. A kernel answers them from a thread of its own, also while a
         * cell runs.
         */
        public Builder heartbeatTimeout(Duration timeout) {
            this.heartbeatTimeout = timeout;
            return this;
        }

        /**
         * How long a workspace's kernel may stay idle (no cell) before it is stopped; the next cell then starts a
         * fresh kernel, and its result begins with a line that says the earlier kernel's variables and imports are
         * gone (files stay). Default: none, a kernel lives until its workspace is removed or the engine closed.
         */
        public Builder idleTimeout(Duration timeout) {
            this.idleTimeout = timeout;
            return this;
        }

        public JupyterEngine build() {
            return new JupyterEngine(this);
        }
    }
}
