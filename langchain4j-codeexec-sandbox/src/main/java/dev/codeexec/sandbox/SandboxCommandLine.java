package dev.codeexec.sandbox;

import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.spi.host.Cgroups;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The host command line of a planned run: the {@link Launcher} shell (status descriptor, control group, rlimits,
 * pinned directories) around bubblewrap ({@link BwrapCommand}), Seatbelt ({@link SeatbeltProfile}) or the bare
 * program, as the platform and profile say. A pure function of the plan, but for the seccomp files it writes once.
 */
final class SandboxCommandLine {

    static final String SHELL = "/bin/sh";

    private final SandboxPlatform platform;
    private final Preflight.Result preflight;
    private final Path stateDir;
    private final long scratchBytes;
    /** How a process limit is enforced without a pids control group. */
    private final RunLimits runLimits;
    /** The seccomp program files, written once per engine into its private state directory. */
    private final Map<NetworkMode, String> seccompFiles = new ConcurrentHashMap<>();

    /**
     * True when runs go out through the egress proxy: bubblewrap then loads the filter without the Unix-socket rule,
     * and the run's helper adds the restricted one after it started the forwarder (see {@link SandboxEgress}).
     */
    private final boolean egress;

    SandboxCommandLine(SandboxPlatform platform, Preflight.Result preflight, Path stateDir, long scratchBytes,
                       RunLimits runLimits, boolean egress) {
        this.egress = egress;
        this.platform = platform;
        this.preflight = preflight;
        this.stateDir = stateDir;
        this.scratchBytes = scratchBytes;
        this.runLimits = runLimits;
    }

    /** True when bubblewrap starts the program and reports on the status descriptor. */
    boolean viaBwrap(PermissionProfile runProfile) {
        return platform == SandboxPlatform.LINUX_BWRAP
                && runProfile.enforcement() != PermissionProfile.Enforcement.EXTERNAL;
    }

    /** True when the platform mounts (bubblewrap), so that binds inside a workspace must be pinned. */
    boolean pins() {
        return platform == SandboxPlatform.LINUX_BWRAP;
    }

    /**
     * The argv of a run.
     *
     * @param plan    the layout (null when the profile is not managed)
     * @param env     the program's environment (under bubblewrap it travels as {@code --setenv})
     * @param program the program's argv, command resolved
     * @param status  the status file the launcher writes descriptor 9 to
     * @param user    who the program runs as on the host
     */
    List<String> argv(PermissionProfile runProfile, SandboxLayout.Plan plan, Map<String, String> env, Path cwd,
                      List<String> program, ResourceLimits limits, Cgroups.RunGroup group, String status,
                      SandboxUser user) {
        Long cpu = limits.cpuTime() == null ? null
                : Math.max(1, (limits.cpuTime().toMillis() + 999) / 1000);
        Long blocks = limits.maxFileBytes() == null ? null : Math.max(1, (limits.maxFileBytes() + 511) / 512);
        Integer nofile = limits.maxOpenFiles();
        List<String> procs = group == null ? List.of() : group.procsFiles();
        if (!viaBwrap(runProfile)) {
            List<String> cmd = platform == SandboxPlatform.MACOS_SEATBELT
                    && runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED
                    ? SeatbeltProfile.argv(SeatbeltProfile.build(plan.mounts(), runProfile.network()), program)
                    : program;
            return Launcher.argv(new Launcher.Spec(SHELL, status, procs, cpu, blocks, nofile, List.of(), List.of(),
                    null, true, cmd));
        }
        if (runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED) {
            String seccomp = seccompFiles.computeIfAbsent(egress ? NetworkMode.ENABLED : runProfile.network(),
                    m -> SeccompFiles.ensure(stateDir, m).toString());
            List<String> bwrapArgv = BwrapCommand.argv(new BwrapCommand.Spec(preflight.bwrap(),
                    runProfile.network() == NetworkMode.RESTRICTED, preflight.proc(), plan.mounts(), scratchBytes,
                    3, Launcher.STATUS_FD, env, cwd.toString(), program, user.launchPrefix(), user.bwrapIdentity(),
                    group != null && group.limitsProcesses() ? List.of() : runLimits.inside(limits.maxProcesses())));
            return Launcher.argv(new Launcher.Spec(SHELL, status, procs, cpu, blocks, nofile, plan.pinnedDirs(),
                    plan.checkedDirs(), seccomp, false, bwrapArgv));
        }
        return Launcher.argv(new Launcher.Spec(SHELL, status, procs, cpu, blocks, nofile, List.of(), List.of(), null,
                false, BwrapCommand.unsandboxedArgv(preflight.bwrap(), Launcher.STATUS_FD, env, cwd.toString(),
                program)));
    }
}
