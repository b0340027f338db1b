package dev.codeexec.spi.host;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.CommandLookup;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A plain host run, as the backends without a sandbox start programs (local, and the Jupyter engine's commands):
 * the workspace's working directory and run directory, the environment (a clean run gets the workspace's
 * {@code HOME} and {@code TMPDIR}; others keep the host user's, as a shell would), the command on the run's own
 * {@code PATH}, and around it, in this order, each where the host allows it:
 * <ol>
 *   <li>the parent-death wrapper ({@link ParentDeath}): the run dies with the JVM that started it;</li>
 *   <li>the run's control groups ({@link Cgroups}, when the engine has them), so that every process of the run is
 *       counted (its process and memory limits) and the run gets one CPU share, however many processes it starts:
 *       on cgroup v1 the launcher thread joins them itself and forks the run in them
 *       ({@link Cgroups.RunGroup#spawn}), no process added; elsewhere a launching shell joins them and {@code exec}s
 *       the rest;</li>
 *   <li>the run's own PID namespace ({@link PidNamespace}): a kill ends every process of the run.</li>
 * </ol>
 * Launches are forked on {@link LauncherThreads}, which live as long as the processes they forked. Host-family SPI
 * (see the package).
 */
public final class HostRuns {

    /** Exit code of the launching shell when it could not join the run's control groups. */
    static final int JOIN_FAILED = 125;
    /** What the launching shell prints on stderr when it could not join: tells a setup failure from the program's. */
    static final String JOIN_FAILED_MESSAGE = "codeexec: cannot join the run's control group";

    /**
     * The launching shell: joins each control group by writing "0" (itself) to its {@code tasks} or
     * {@code cgroup.procs} file, then {@code exec}s the run. Every value is a positional parameter.
     */
    static final String JOIN_SCRIPT = "n=$1; shift; while [ \"$n\" -gt 0 ]; do echo 0 2>/dev/null >\"$1\" || { "
            + "echo \"" + JOIN_FAILED_MESSAGE + "\" >&2; exit " + JOIN_FAILED + "; }; shift; n=$((n-1)); done; "
            + "exec \"$@\"";

    private static final String SHELL = "/bin/sh";

    private static final HostRuns PLAIN = new HostRuns(LauncherThreads.shared(), null);

    private final LauncherThreads launchers;
    private final Cgroups cgroups;

    /**
     * @param launchers the threads that fork the engine's runs
     * @param cgroups   the engine's control groups; null when it has none (runs are then not limited)
     */
    public HostRuns(LauncherThreads launchers, Cgroups cgroups) {
        this.launchers = launchers;
        this.cgroups = cgroups;
    }

    /** Plans one run without limits, forked on the {@linkplain LauncherThreads#shared() shared} launcher threads. */
    public static PreparedRun prepare(PathResolver resolver, RunProgramSpec spec, RunEnvironment environment,
                                      int outputCap) {
        return PLAIN.plan(resolver, spec, environment, outputCap, ResourceLimits.NONE);
    }

    /**
     * Plans one run in the workspace of {@code resolver}, with its memory and process limits in control groups. The
     * caller has checked that these limits are enforceable ({@link #enforces}); others are ignored here.
     *
     * @throws BackendUnavailableException when the run's control group cannot be created
     */
    public PreparedRun plan(PathResolver resolver, RunProgramSpec spec, RunEnvironment environment, int outputCap,
                            ResourceLimits limits) {
        HostRunPlace place = HostRunPlace.of(resolver, spec);
        Map<String, String> env = environment.forRun(spec,
                RunEnvironment.runtimeVariables(place.root().toString(), place.runDir(), spec.cleanEnv()));
        String program = CommandLookup.resolve(spec.cmd(), env.get("PATH"), place.cwd().toString(),
                HostRunPlace::isExecutableFile);
        Cgroups.RunGroup group;
        try {
            group = cgroups == null ? null : cgroups.openFor(limits.memoryBytes(), limits.maxProcesses());
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot create the run's control group for its memory or process "
                    + "limit: " + e.getClass().getSimpleName(), e);
        }
        try {
            List<String> namespace = PidNamespace.wrapper();
            List<String> argv = new ArrayList<>(ParentDeath.wrapper());
            boolean shell = group != null && !group.spawnsFromThread();
            if (shell) {
                argv.addAll(List.of(SHELL, "-c", JOIN_SCRIPT, "codeexec-run",
                        Integer.toString(group.procsFiles().size())));
                argv.addAll(group.procsFiles());
            }
            argv.addAll(namespace);
            argv.add(program);
            argv.addAll(spec.args());
            HostProcessChannel channel = HostProcessChannel.of(!namespace.isEmpty()).startingOn(launchers);
            if (group != null && !shell) {
                channel = channel.spawningIn(group);
            }
            return new HostRun(channel, new ProgramLaunch(argv, env, place.cwd().toString(), spec.stdin(),
                    spec.timeout(), outputCap, spec.outputListener()), group, shell);
        } catch (RuntimeException | Error e) {
            if (group != null) {
                group.close();
            }
            throw e;
        }
    }

    /** True when runs of this engine can be held to {@code limits}' memory and process limits here. */
    public boolean enforces(ResourceLimits limits) {
        return (limits.memoryBytes() == null || cgroups != null && cgroups.memory())
                && (limits.maxProcesses() == null || cgroups != null && cgroups.pids());
    }

    /** A host run and its control group, released after the run or when its session is closed. */
    private static final class HostRun extends PreparedRun {
        private final Cgroups.RunGroup group;
        /** True when a launching shell joins the groups (else the launcher thread started the run in them). */
        private final boolean shell;

        HostRun(HostProcessChannel channel, ProgramLaunch launch, Cgroups.RunGroup group, boolean shell) {
            super(channel, launch);
            this.group = group;
            this.shell = shell;
        }

        /** A launching shell that could not join the groups ran nothing: that is no result of the program. */
        @Override
        public RunResult check(RunResult result) {
            if (shell && result.exitCode() == JOIN_FAILED
                    && result.stderr().strip().equals(JOIN_FAILED_MESSAGE)) {
                throw new BackendUnavailableException(JOIN_FAILED_MESSAGE + "; nothing was run");
            }
            return result;
        }

        @Override
        public void release() {
            if (group != null) {
                group.close();
            }
        }
    }
}
