package dev.codeexec.kubernetes;

import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.ContainerShell;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunListing;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * Plans the runs of a {@link KubernetesEngine} once the engine resolved what the core knows (limits, environment,
 * working directory, run folder): the wrapper's argv ({@link PodScripts#RUN} behind the pod's launcher), its control
 * folder and its exec channel. Stateless apart from its collaborators; thread-safe.
 *
 * <p>Limits: CPU time, open files and file size apply to each run (the wrapper's {@code ulimit}); memory is the
 * pod's, fixed when the pod started: a run may not ask for less (it would not get it), and one that asks for more
 * keeps the pod's.
 */
final class PodRuns {

    private final PodExec exec;
    private final long podMemoryBytes;
    private final Function<Workspace, Optional<WorkspaceGoneException>> whyGone;

    /**
     * @param podMemoryBytes the pods' memory limit
     * @param whyGone        explains a lost run when its pod is gone (deleted, evicted, OOM-killed)
     */
    PodRuns(PodExec exec, long podMemoryBytes, Function<Workspace, Optional<WorkspaceGoneException>> whyGone) {
        this.exec = exec;
        this.podMemoryBytes = podMemoryBytes;
        this.whyGone = whyGone;
    }

    /** @throws UnsupportedCapabilityException when the run asks for less memory than the pod has */
    void requireLimits(ResourceLimits limits) {
        if (limits.memoryBytes() != null && limits.memoryBytes() < podMemoryBytes) {
            throw new UnsupportedCapabilityException("KubernetesEngine cannot give a run " + limits.memoryBytes()
                    + " bytes of memory: memory is the pod's limit (" + podMemoryBytes + " bytes), fixed when the pod "
                    + "starts; set KubernetesEngine.Builder.memoryBytes for every workspace instead");
        }
    }

    /**
     * The run of {@code spec} in workspace {@code ws}'s pod.
     *
     * @param cwd       the working directory in the pod
     * @param runDir    the run's folder, relative to the workspace
     * @param env       the run's whole environment
     * @param outputCap bytes kept per output stream
     * @param listing   the folders the run lists when it ends, or null
     */
    PreparedRun plan(Workspace ws, KubernetesWorkspaces.WorkspacePod pod, RunProgramSpec spec, ResourceLimits limits,
                     String cwd, String runDir, Map<String, String> env, int outputCap, RunListing listing) {
        requireLimits(limits);
        String control = PodLayout.CONTROL + "/" + UUID.randomUUID();
        List<String> command = new ArrayList<>();
        command.add(spec.cmd());
        command.addAll(spec.args());
        List<String> argv = PodScripts.runArgv(pod.reaper(), control, PodLayout.ROOT + "/" + runDir, cwd,
                ContainerShell.ulimits(limits), podMemoryBytes, listing, env, command);
        PodExecChannel channel = new PodExecChannel(exec, pod.pod(), control, listing);
        ProgramLaunch launch = new ProgramLaunch(argv, env, cwd, spec.stdin(), spec.timeout(), outputCap,
                spec.outputListener());
        return new PreparedRun(channel, launch) {
            @Override
            public RunResult check(RunResult r) {
                RuntimeException lost = channel.failure();
                if (lost == null) {
                    return r;
                }
                Optional<WorkspaceGoneException> gone = whyGone.apply(ws);
                if (gone.isPresent()) {
                    throw gone.get(); // the pod died under the run: its files are gone too
                }
                throw new RunOutcomeUnknownException(lost.getMessage() + " after '" + spec.cmd() + "' started in pod "
                        + pod.pod() + "; its outcome is unknown (it may have run and changed files: look at the "
                        + "workspace before running it again)", new RunResult(r.stdout(), r.stderr(), -1,
                        r.duration(), false, r.stdoutTruncated(), r.stderrTruncated()), lost.getCause());
            }
        };
    }

}
