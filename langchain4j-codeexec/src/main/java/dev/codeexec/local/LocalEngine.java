package dev.codeexec.local;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.internal.host.HostRuns;
import dev.codeexec.internal.host.PidNamespace;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.AbstractEngine;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
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

    /** The {@code PATH} of a clean environment: {@link ShellEnvironmentPolicy#CLEAN_PATH}. */
    public static final String CLEAN_PATH = ShellEnvironmentPolicy.CLEAN_PATH;

    private static final Capabilities CAPABILITIES = Capabilities.builder()
            .isolation(Isolation.NONE)
            .networkAllowed(true)
            .readOnlyMount(false)
            .streaming(true)
            .supportsCleanEnv(true)
            .interactive(true)
            .enforcedLimits(Set.of())
            .diskQuota(false)
            .build();

    private final HostWorkspaceManager manager;
    private final HostWorkspaceFS fs;
    private final Path ownedBaseDir;

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
        this.manager = new HostWorkspaceManager(base);
        this.fs = HostWorkspaceFS.builder().hostPaths(manager::hostPath).inputRoots(inputRoots())
                .artifacts(artifactStore()).build();
        PidNamespace.wrapper(); // probed once, at the first engine, so a host without namespaces warns early
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
    public Capabilities describe() {
        return CAPABILITIES;
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        limitsFor(spec);
        return HostRuns.prepare(fs.resolver(ws), spec, environment(), outputCap(spec));
    }

    /** Removes every workspace, and the base directory when the engine created it. */
    @Override
    protected void closeBackend() {
        manager.close();
        if (ownedBaseDir != null) {
            try {
                Files.deleteIfExists(ownedBaseDir);
            } catch (IOException e) {
                throw new CodeExecException("could not remove the base directory", e);
            }
        }
    }

    /**
     * Builder for {@link LocalEngine}; the common settings are those of {@link EngineBuilder}, with the environment
     * policy {@link ShellEnvironmentPolicy#inheritAll()} by default.
     */
    public static final class Builder extends EngineBuilder<Builder> {
        private Path rootDir;

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
