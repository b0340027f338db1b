package dev.codeexec.container;

import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.ContainerShell;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunListing;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plans the runs of a {@link ContainerEngine} once the engine resolved what the core knows (limits, environment,
 * working directory, run folder): the wrapper's argv ({@link ExecScripts#RUN}), the run's own group id, its exec
 * channel, and the container's memory and process limits for as long as it runs. Thread-safe: a workspace
 * container's limits are changed under its own monitor, never an engine-wide one.
 */
final class ContainerRuns {

    private static final Logger LOG = LoggerFactory.getLogger(ContainerRuns.class);

    /** Group ids of runs start above this, far from any group of an image. */
    private static final long GID_BASE = 1_000_000L;

    private final DockerConnection docker;
    private final ContainerSettings settings;
    private final ContainerEgress egress;
    private final String helperUser;
    private final AtomicLong nextGid = new AtomicLong(GID_BASE + ThreadLocalRandom.current().nextLong(1_000_000_000L));

    /** @param egress the engine's egress proxy, or null */
    ContainerRuns(DockerConnection docker, ContainerSettings settings, ContainerEgress egress, String helperUser) {
        this.docker = docker;
        this.settings = settings;
        this.egress = egress;
        this.helperUser = helperUser;
    }

    /**
     * The run of {@code spec} in container {@code c} of workspace {@code workspaceId}.
     *
     * @param cwd       the working directory in the container
     * @param runDir    the run's folder, relative to the workspace
     * @param env       the run's whole environment
     * @param outputCap bytes kept per output stream
     * @param listing   the folders the run lists when it ends, or null
     * @param run       true for a run; false for the workspace's long-lived program (its Python kernel's relay),
     *                  which lives under the container's limits as they are (so that it never holds another run's
     *                  limits in place after that run ended) and gets raw stdin without an end of file
     *                  ({@link FramedStdin#raw()}: no process per write, input that flows at the pids limit)
     */
    PreparedRun plan(WorkspaceContainer c, String workspaceId, RunProgramSpec spec, ResourceLimits limits, String cwd,
                     String runDir, Map<String, String> env, int outputCap, RunListing listing, boolean run) {
        long gid = nextGid.incrementAndGet();
        String control = ContainerWorkspaces.CONTROL + "/" + UUID.randomUUID();
        String wrapper = run ? ExecScripts.RUN : ExecScripts.RUN_RAW_STDIN;
        List<String> argv = new ArrayList<>(List.of("sh", "-c", wrapper, "sh", control,
                ContainerWorkspaces.ROOT + "/" + runDir, Long.toString(gid), cwd, ContainerShell.ulimits(limits),
                Long.toString(Objects.requireNonNullElse(limits.memoryBytes(), settings.memoryBytes()))));
        if (listing == null) {
            argv.addAll(List.of("-", "-", "-", "-", "-"));
        } else {
            argv.addAll(listing.arguments());
            argv.add(ContainerWorkspaces.ROOT);
        }
        argv.addAll(List.of("env", "-i"));
        env.forEach((k, v) -> argv.add(k + "=" + v));
        argv.add(spec.cmd());
        argv.addAll(spec.args());
        if (run) {
            applyContainerLimits(c, limits);
        }
        ExecChannel channel = new ExecChannel(docker, c.id, settings.uid() + ":" + gid, helperUser, gid, control,
                listing, run);
        ProgramLaunch launch = new ProgramLaunch(argv, env, cwd, spec.stdin(), spec.timeout(), outputCap,
                spec.outputListener());
        // Opens a gate that went down.
        AutoCloseable egressRun = egress == null ? null : egress.egress().run(workspaceId);
        return new PreparedRun(channel, launch) {
            @Override
            public RunResult check(RunResult r) {
                RuntimeException lost = channel.failure();
                if (lost == null) {
                    return r;
                }
                throw new RunOutcomeUnknownException(lost.getMessage() + " after the program started; its outcome is"
                        + " unknown (it may have run and changed files: look at the workspace before running it again)",
                        new RunResult(r.stdout(), r.stderr(), -1, r.duration(), false, r.stdoutTruncated(),
                                r.stderrTruncated()), lost.getCause());
            }

            @Override
            public void release() {
                if (egressRun != null) {
                    Execs.closeQuietly(egressRun);
                }
                if (run && c.activeRuns.decrementAndGet() == 0) {
                    restoreContainerLimits(c);
                }
            }
        };
    }


    /**
     * Memory and processes are the container's limits: a run asking for other values gets them applied to its
     * workspace's container for as long as it runs (runs overlapping in one workspace share them).
     */
    private void applyContainerLimits(WorkspaceContainer c, ResourceLimits limits) {
        synchronized (c) {
            c.activeRuns.incrementAndGet();
            Long mem = limits.memoryBytes() == null ? settings.memoryBytes() : limits.memoryBytes();
            Long pids = limits.maxProcesses() == null ? settings.pids() : (long) limits.maxProcesses();
            if (!Objects.equals(mem, c.memoryBytes()) || !Objects.equals(pids, c.pids())) {
                try {
                    update(c, mem, pids);
                } catch (RuntimeException e) {
                    c.activeRuns.decrementAndGet();
                    throw e;
                }
            }
        }
    }

    private void restoreContainerLimits(WorkspaceContainer c) {
        synchronized (c) {
            if (c.activeRuns.get() == 0 && (!Objects.equals(settings.memoryBytes(), c.memoryBytes())
                    || !Objects.equals(settings.pids(), c.pids()))) {
                try {
                    update(c, settings.memoryBytes(), settings.pids());
                } catch (RuntimeException e) {
                    LOG.warn("could not restore a workspace container's limits: {}", e.getMessage());
                }
            }
        }
    }

    private void update(WorkspaceContainer c, Long mem, Long pids) {
        try {
            docker.control().updateContainerCmd(c.id).withMemory(mem).withMemorySwap(mem).exec();
            docker.control().updateContainerCmd(c.id).withPidsLimit(pids).exec();
            c.limits(mem, pids);
        } catch (RuntimeException e) {
            throw docker.translate(e, "apply the run's memory and process limits");
        }
    }
}
