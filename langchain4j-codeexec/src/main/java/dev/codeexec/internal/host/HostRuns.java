package dev.codeexec.internal.host;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.spi.CommandLookup;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A plain host run, as the backends without a sandbox start programs (local, and the Jupyter engine's commands):
 * the workspace's working directory and run directory, the environment (a clean run gets the workspace's
 * {@code HOME} and {@code TMPDIR}; others keep the host user's, as a shell would), the command on the run's own
 * {@code PATH}, and the run's own PID namespace where the host allows it. Internal: not part of the API.
 */
public final class HostRuns {

    private HostRuns() {
    }

    /** Plans one run in the workspace of {@code resolver}. */
    public static PreparedRun prepare(PathResolver resolver, RunProgramSpec spec, RunEnvironment environment,
                                      int outputCap) {
        HostRunPlace place = HostRunPlace.of(resolver, spec);
        Map<String, String> env = environment.forRun(spec,
                RunEnvironment.runtimeVariables(place.root().toString(), place.runDir(), spec.cleanEnv()));
        List<String> wrapper = PidNamespace.wrapper();
        List<String> argv = new ArrayList<>(wrapper);
        argv.add(CommandLookup.resolve(spec.cmd(), env.get("PATH"), place.cwd().toString(),
                HostRunPlace::isExecutableFile));
        argv.addAll(spec.args());
        return new PreparedRun(HostProcessChannel.of(!wrapper.isEmpty()), new ProgramLaunch(argv, env,
                place.cwd().toString(), spec.stdin(), spec.timeout(), outputCap, spec.outputListener()));
    }
}
