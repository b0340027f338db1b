package dev.codeexec.local;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeExecutor;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
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
 * it, so even detached daemons die) and returns promptly; after a run no process it started is left.
 *
 * <pre>{@code
 * try (LocalEngine engine = LocalEngine.create()) {
 *     Workspace ws = engine.manager().createWorkspace("demo", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("echo").args("hi").build());
 * }
 * }</pre>
 */
public final class LocalEngine implements Engine, CodeExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(LocalEngine.class);

    /** The no-isolation warning is logged once per JVM, at the first engine. */
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    /** The {@code PATH} of a clean environment. */
    public static final String CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin";

    private static final Capabilities CAPABILITIES = Capabilities.builder()
            .isolation(Isolation.NONE)
            .networkAllowed(true)
            .readOnlyMount(false)
            .streaming(true)
            .supportsCleanEnv(true)
            .interactive(true)
            .enforcedLimits(Set.of())
            .maxDiskBytes(false)
            .build();

    private final HostWorkspaceManager manager;
    private final HostWorkspaceFS fs;
    private final Map<String, String> baseEnvironment;
    private final int maxOutputBytes;
    private final ArtifactService artifacts;
    private final Path ownedBaseDir;
    private final WorkspaceRegistry codeWorkspaces;
    private final Set<ProgramSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ProgramRunner runner = this::run;
    private final InteractiveProgramRunner interactive = this::startSession;

    private LocalEngine(Builder b) {
        Path base = b.baseDir;
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
        this.manager = new HostWorkspaceManager(base);
        this.artifacts = b.artifacts;
        this.fs = HostWorkspaceFS.builder().hostPaths(manager::hostPath).inputRoots(b.inputRoots)
                .artifacts(b.artifacts).build();
        this.baseEnvironment = Map.copyOf(b.baseEnvironment == null ? System.getenv() : b.baseEnvironment);
        this.maxOutputBytes = b.maxOutputBytes == null ? BoundedOutput.DEFAULT_CAP : b.maxOutputBytes;
        if (maxOutputBytes <= 0) {
            throw new InvalidSpecException("maxOutputBytes (" + maxOutputBytes + ") must be positive");
        }
        this.codeWorkspaces = WorkspaceRegistry.builder(this).build();
        PidNamespace.wrapper();
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("LocalEngine runs code on this host WITHOUT isolation: programs can read and write your files, "
                    + "reach the network and, unless cleanEnv is set, see your environment. Use the sandbox or "
                    + "container backend for untrusted code.");
        }
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
    public ProgramRunner runner() {
        return runner;
    }

    @Override
    public Capabilities describe() {
        return CAPABILITIES;
    }

    @Override
    public Optional<InteractiveProgramRunner> interactive() {
        return Optional.of(interactive);
    }

    @Override
    public Optional<ArtifactService> artifacts() {
        return Optional.ofNullable(artifacts);
    }

    /**
     * Runs the blocks in the workspace named by the input's execution id (created on first use and kept until
     * {@link #close()}), or in a temporary workspace removed afterwards when the id is null.
     */
    @Override
    public CodeExecutionResult executeCode(CodeExecutionInput input) {
        if (input.executionId() == null) {
            Workspace ws = manager.createWorkspace("code", WorkspacePolicy.DEFAULT);
            try {
                return executeCode(ws, input);
            } finally {
                manager.cleanup(ws);
            }
        }
        return codeWorkspaces.withWorkspace(input.executionId(), ws -> executeCode(ws, input));
    }

    private RunResult run(Workspace ws, RunProgramSpec spec) {
        return HostProcesses.run(prepare(ws, spec));
    }

    private ProgramSession startSession(Workspace ws, RunProgramSpec spec) {
        return TrackedSession.track(HostProcesses.start(prepare(ws, spec), UUID.randomUUID().toString()), sessions,
                null);
    }

    private HostLaunch prepare(Workspace ws, RunProgramSpec spec) {
        if (closed.get()) {
            throw new CodeExecException("this LocalEngine is closed");
        }
        CAPABILITIES.requireLimits(spec.limits(), "LocalEngine");
        PathResolver resolver = fs.resolver(ws);
        Path cwd = resolver.resolveExisting(spec.cwd());
        if (!Files.isDirectory(cwd)) {
            throw new InvalidSpecException("cwd '" + PathResolver.normalize(spec.cwd()) + "' is not a directory");
        }
        String runDir = WorkspaceLayout.newRunDir();
        resolver.ensureDirectory(runDir);
        Map<String, String> env = environment(resolver.root(), spec, runDir);
        List<String> wrapper = PidNamespace.wrapper();
        List<String> argv = new ArrayList<>(wrapper);
        argv.add(resolveCommand(spec.cmd(), env.get("PATH"), cwd));
        argv.addAll(spec.args());
        int cap = spec.maxOutputBytes() > 0 ? spec.maxOutputBytes() : maxOutputBytes;
        return new HostLaunch(argv, env, cwd, spec.stdin(), spec.timeout(), cap, spec.outputListener(),
                !wrapper.isEmpty());
    }

    private Map<String, String> environment(Path root, RunProgramSpec spec, String runDir) {
        Map<String, String> env = new LinkedHashMap<>();
        if (spec.cleanEnv()) {
            env.put("PATH", CLEAN_PATH);
            env.put("LANG", "C.UTF-8");
            env.put("HOME", root.resolve(WorkspaceLayout.HOME).toString());
            env.put("TMPDIR", root.resolve(WorkspaceLayout.TMP).toString());
        } else {
            env.putAll(baseEnvironment);
        }
        env.putAll(WorkspaceLayout.variables(root.toString(), runDir));
        env.putAll(spec.env());
        return env;
    }

    /** A bare name is looked up on the run's own PATH, never the JVM's; a name with '/' is used as given. */
    static String resolveCommand(String cmd, String path, Path cwd) {
        if (cmd.contains("/")) {
            return cmd;
        }
        if (path != null) {
            for (String dir : path.split(":")) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path candidate = (dir.startsWith("/") ? Path.of(dir) : cwd.resolve(dir)).resolve(cmd);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
        }
        // The PATH itself is not quoted: it may come from the host's environment.
        throw new InvalidSpecException("command '" + cmd + "' was not found on the run's PATH; give an absolute "
                + "path, or set PATH in the run's environment");
    }

    /** Kills running sessions, removes every workspace, and the base directory when the engine created it. */
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
            if (ownedBaseDir != null) {
                Files.deleteIfExists(ownedBaseDir);
            }
        } catch (RuntimeException | IOException e) {
            failure = addTo(failure, e instanceof RuntimeException re ? re
                    : new CodeExecException("could not remove the base directory", e));
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

    /** Builder for {@link LocalEngine}. */
    public static final class Builder {
        private Path baseDir;
        private List<Path> inputRoots = List.of();
        private ArtifactService artifacts;
        private Map<String, String> baseEnvironment;
        private Integer maxOutputBytes;

        /** Where workspaces are created; default a new temporary directory, removed on {@link #close()}. */
        public Builder baseDir(Path baseDir) {
            this.baseDir = baseDir;
            return this;
        }

        /** Host directories whose files may be staged as inputs; default none. */
        public Builder inputRoots(List<Path> inputRoots) {
            this.inputRoots = List.copyOf(inputRoots);
            return this;
        }

        /** The artifact store for {@code artifact://} inputs and saved outputs; default none. */
        public Builder artifactService(ArtifactService artifacts) {
            this.artifacts = artifacts;
            return this;
        }

        /**
         * The environment runs inherit when they do not ask for a clean one; default the JVM's environment. Pass
         * a smaller map to keep host secrets out of every run.
         */
        public Builder baseEnvironment(Map<String, String> baseEnvironment) {
            this.baseEnvironment = baseEnvironment;
            return this;
        }

        /** Bytes kept per output stream when a run does not say; default 1 MiB. */
        public Builder maxOutputBytes(int maxOutputBytes) {
            this.maxOutputBytes = maxOutputBytes;
            return this;
        }

        public LocalEngine build() {
            return new LocalEngine(this);
        }
    }
}
