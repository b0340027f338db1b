package dev.codeexec.sandbox;

import dev.codeexec.network.EgressBridge;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.workspace.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A planned sandbox run: its launch, its control group and its private directory (status file, pinned file links),
 * released once after the run or session. Its result is checked against the out-of-band setup status.
 */
final class SandboxRun extends PreparedRun {

    private static final Logger LOG = LoggerFactory.getLogger(SandboxRun.class);

    private final Cgroups.RunGroup group;
    private final Path runDir;
    /** True when bubblewrap reports the start on the status descriptor; false when the launcher does. */
    private final boolean viaBwrap;
    private final Path workspace;
    /** The run's layout, whose placeholders are removed after the run; null when nothing was mounted. */
    private final SandboxLayout.Plan plan;
    /** The run's folder under runs/: its launch carries no environment to read RUN_DIR from (see runFolder()). */
    private final String runFolder;
    /** True when the program was started by the command allow list's helper (see {@link ExecAllowList}). */
    private final boolean allowListed;
    /** The run as the workspace's egress counts it (see {@link SandboxEgress}), or null. */
    private final AutoCloseable egressRun;

    SandboxRun(HostProcessChannel channel, ProgramLaunch launch, Cgroups.RunGroup group, Path runDir,
               boolean viaBwrap, Path workspace, SandboxLayout.Plan plan, String runFolder, boolean allowListed,
               AutoCloseable egressRun) {
        super(channel, launch);
        this.allowListed = allowListed;
        this.egressRun = egressRun;
        this.runFolder = runFolder;
        this.group = group;
        this.runDir = runDir;
        this.viaBwrap = viaBwrap;
        this.workspace = workspace;
        this.plan = plan;
    }

    /**
     * The run's folder under {@code runs/}, from the plan: under bubblewrap the launch's own environment is empty (the
     * program's travels as {@code --setenv}), so the default, which reads {@code RUN_DIR} from it, would find none.
     */
    @Override
    public String runFolder() {
        return runFolder;
    }

    /** Setups a run may try when each finds the host's mount table changing under it. */
    static final int MOUNT_TABLE_ATTEMPTS = 5;

    /**
     * Runs a plan, and plans and runs again when bubblewrap could not set it up because the host changed under it,
     * which a new plan and a new copy of the mount table get right (nothing ran before):
     * <ul>
     *   <li>a path the plan hides vanished from the host in between (a home directory removed, say: bubblewrap cannot
     *       create the mount point of the hidden {@code ~/.aws} in the read-only root); the new plan skips it; once;
     *   </li>
     *   <li>a mount elsewhere on the host came or went while bubblewrap copied the mount table
     *       ({@link MountTableChangedException}: other workspaces' volumes, containers); up to
     *       {@value #MOUNT_TABLE_ATTEMPTS} setups in all.</li>
     * </ul>
     * Any other setup failure is thrown as it is.
     *
     * @param plan plans the run (called once per attempt)
     * @param run  runs a plan to completion and releases it
     */
    static RunResult runReplanningOnHostChange(Supplier<SandboxRun> plan, Function<SandboxRun, RunResult> run) {
        boolean replannedVanished = false;
        for (int attempt = 1; ; attempt++) {
            SandboxRun planned = plan.get();
            List<String> hidden = planned.hiddenPaths();
            try {
                return run.apply(planned);
            } catch (MountTableChangedException e) {
                if (attempt >= MOUNT_TABLE_ATTEMPTS) {
                    throw e;
                }
                LOG.debug("the host's mount table changed during a sandbox's setup; setting it up again");
            } catch (BackendUnavailableException e) {
                List<String> vanished = hidden.stream()
                        .filter(p -> !Files.exists(Path.of(p), LinkOption.NOFOLLOW_LINKS)).toList();
                if (vanished.isEmpty() || replannedVanished) {
                    throw e;
                }
                replannedVanished = true;
                LOG.debug("paths the sandbox hides vanished during setup ({}); planning the run again", vanished);
            }
        }
    }

    /** Host paths this run's layout hides. */
    List<String> hiddenPaths() {
        return plan == null ? List.of() : plan.mounts().stream().filter(m -> m.kind().isHidden())
                .map(Mount::path).toList();
    }

    /** The run's control group, or null. */
    Cgroups.RunGroup group() {
        return group;
    }

    @Override
    public RunResult check(RunResult r) {
        String status;
        try {
            status = Files.readString(SetupStatus.statusFile(runDir));
        } catch (IOException e) {
            status = ""; // nothing reported: the program did not start
        }
        RunResult checked = SetupStatus.check(r, status, viaBwrap, workspace);
        checked = egressRun == null ? checked : EgressBridge.check(checked);
        return allowListed ? ExecAllowList.check(checked) : checked;
    }

    @Override
    public void release() {
        release(group, plan, runDir, egressRun);
    }

    /**
     * Releases what a run planned: its control group, the layout's placeholders, its private directory, its count in
     * the workspace's egress.
     */
    static void release(Cgroups.RunGroup group, SandboxLayout.Plan plan, Path runDir, AutoCloseable egressRun) {
        try {
            if (egressRun != null) {
                egressRun.close();
            }
        } catch (Exception e) {
            LOG.warn("could not end a run's egress connections: {}", e.toString());
        }
        try {
            if (group != null) {
                group.close();
            }
            if (plan != null) {
                plan.removePlaceholders();
            }
        } finally {
            deleteRunFiles(runDir);
        }
    }

    /**
     * The launch of this plan for an operator to start ({@link SandboxEngine#plannedLaunch}): the run's control group
     * is released and its limits are carried by a group of {@code cgroups} kept until the engine closes.
     */
    ProgramLaunch plannedLaunch(Cgroups cgroups) {
        List<String> procs = List.of();
        if (group != null) {
            try {
                procs = cgroups.planned(group).procsFiles(); // same limits, in a group kept until close()
            } catch (IOException e) {
                throw new BackendUnavailableException("cannot create the planned launch's control group", e);
            } finally {
                group.close();
            }
        }
        ProgramLaunch l = launch();
        return new ProgramLaunch(Launcher.withCgroups(l.argv(), procs), l.environment(), l.directory(), l.stdin(),
                l.timeout(), l.maxOutputBytes(), l.listener());
    }

    /** Removes a run's private directory and status file. */
    static void deleteRunFiles(Path runDir) {
        try {
            FileTrees.deleteTree(runDir);
            Files.deleteIfExists(SetupStatus.statusFile(runDir));
        } catch (RuntimeException | IOException e) {
            LOG.warn("could not remove a run's private directory: {}", e.toString());
        }
    }
}
