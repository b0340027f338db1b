package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.network.EgressBridge;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.HostRunPlace;
import dev.codeexec.spi.CommandLookup;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.RunHistory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Plans one sandbox run from a spec: the run's profile (the engine's, its extra grants, the workspace's read-only
 * stages), the working directory, the environment, the mount layout computed from the host as it is now, the
 * command as the sandbox sees it, the control group, and the command line. Nothing is started.
 */
final class SandboxRunPlanner {

    /** Smallest accepted open-files limit: bubblewrap itself needs a few descriptors. */
    static final int MIN_OPEN_FILES = 16;

    private final PermissionProfile profile;
    private final AccessDecision access;
    private final RunEnvironment environment;
    private final Path sandboxRoot;
    /** Private per-run directories (status file, pinned file links), removed when the run or session ends. */
    private final Path runsDir;
    private final Cgroups cgroups;
    private final SandboxCommandLine commandLine;
    private final HostProcessChannel wrappedChannel;
    private final HostProcessChannel directChannel;
    /** The workspaces' volumes, whose pinned file links stay on them; null when workspaces are plain directories. */
    private final LoopVolumes volumes;
    /** Remembers what each run's writable trees held, so that the next run lists only what changed. */
    private final ProtectedNameScanner protectedNames = new ProtectedNameScanner();
    /** What the profile's host rules resolved to, while the host directories looked in are unchanged. */
    private final HostRuleCache hostRules = new HostRuleCache();
    /** The account files of the sandbox user, reused while the host's read the same (see {@link AccountFiles}). */
    private final AccountFiles accountFiles;
    /** The command allow list the kernel enforces on every run, or null. */
    private final ExecAllowList allowList;
    /** The egress proxy every run's connections go through, or null. */
    private final SandboxEgress egress;

    SandboxRunPlanner(PermissionProfile profile, RunEnvironment environment, Path sandboxRoot, Path runsDir,
                      Cgroups cgroups, SandboxCommandLine commandLine, HostProcessChannel wrappedChannel,
                      HostProcessChannel directChannel, LoopVolumes volumes, ExecAllowList allowList,
                      SandboxEgress egress) {
        this.volumes = volumes;
        this.allowList = allowList;
        this.egress = egress;
        this.profile = profile;
        this.access = new AccessDecision(profile);
        this.environment = environment;
        this.sandboxRoot = sandboxRoot;
        this.runsDir = runsDir;
        this.accountFiles = new AccountFiles(runsDir);
        this.cgroups = cgroups;
        this.commandLine = commandLine;
        this.wrappedChannel = wrappedChannel;
        this.directChannel = directChannel;
    }

    /** Forgets what was remembered of a workspace's tree (it was removed), and removes its account files. */
    void forget(Path workspaceRoot) {
        protectedNames.forget(workspaceRoot);
        accountFiles.forget(workspaceRoot);
    }

    /** Directories remembered of a workspace's tree (for tests). */
    long rememberedDirectories(Path workspaceRoot) {
        return protectedNames.remembered(workspaceRoot);
    }

    /** The decision of the engine's own profile. */
    AccessDecision access() {
        return access;
    }

    /**
     * @throws InvalidSpecException        for a bad spec, grant or limit
     * @throws PolicyViolationException    when the profile hides the working directory or refuses the layout
     * @throws BackendUnavailableException when the run's control group cannot be made
     */
    SandboxRun plan(String workspaceId, PathResolver resolver, Set<String> readOnlyPaths, RunProgramSpec spec,
                    AdditionalPermissions extra, ResourceLimits limits, int outputCap, SandboxUser user) {
        validateLimits(limits);
        if (allowList != null && !(extra.readPaths().isEmpty() && extra.writePaths().isEmpty())) {
            throw new InvalidSpecException("additional permissions are refused where the command allow list is "
                    + "enforced in the kernel: a granted path could hold or receive a program the loader runs");
        }
        PermissionProfile runProfile = extra.applyTo(profile);
        if (egress != null && runProfile.network() != NetworkMode.RESTRICTED) {
            throw new InvalidSpecException("a run cannot enable the network where an egress policy holds: its "
                    + "programs reach the hosts the policy allows through the proxy");
        }
        if (profile.enforcement() == PermissionProfile.Enforcement.MANAGED && !readOnlyPaths.isEmpty()) {
            runProfile = runProfile.withReadPaths(readOnlyPaths.toArray(String[]::new));
        }
        AccessDecision decision = runProfile == profile ? access : new AccessDecision(runProfile);
        HostRunPlace place = HostRunPlace.of(resolver, spec, (cwdRel, cwdPath) -> {
            if (!decision.canRead(resolver.relativize(cwdPath))) {
                throw new PolicyViolationException("cwd '" + cwdRel + "' is hidden by the permission profile");
            }
        });
        user.claim(place.runDirPath()); // the program writes its run directory
        Path root = place.root();
        Path cwd = place.cwd();
        Map<String, String> runtime = RunEnvironment.runtimeVariables(root.toString(), place.runDir(), true);
        if (user.drops()) {
            // The user programs run as has a name inside (see SandboxAccounts), not the JVM's.
            String name = SandboxAccounts.nameOf(user.uid(), SandboxAccounts.hostPasswd());
            runtime.put("USER", name);
            runtime.put("LOGNAME", name);
        }
        Map<String, String> env = environment.forRun(spec, runtime);
        if (egress != null) {
            env.putAll(EgressBridge.environment()); // the model's own proxy settings would lead nowhere
        }

        Path privateDir = runsDir.resolve(UUID.randomUUID().toString());
        Cgroups.RunGroup group = null;
        SandboxLayout.Plan plan = null;
        AutoCloseable egressRun = null;
        try {
            boolean managed = runProfile.enforcement() == PermissionProfile.Enforcement.MANAGED;
            // Only bubblewrap mounts: a path-based sandbox (Seatbelt) has nothing to pin.
            LoopVolumes.VolumePins volumePins = volumes == null ? null
                    : volumes.pinsOf(root, privateDir.getFileName().toString());
            plan = managed ? SandboxLayout.plan(runProfile, root, sandboxRoot, SandboxLayout.homeDirectories(),
                    commandLine.pins() ? privateDir : null, volumePins, user, protectedNames, hostRules) : null;
            if (plan != null && !plan.visible(cwd.toString())) {
                throw new PolicyViolationException("the working directory is hidden by the permission profile");
            }
            if (plan != null && commandLine.pins() && user.drops()) {
                plan = plan.withMounts(SandboxAccounts.mounts(plan, user.uid(), user.gid(), env.get("HOME"),
                        accountFiles));
            }
            if (allowList != null) {
                if (plan == null || volumePins == null || !commandLine.pins()) {
                    throw new PolicyViolationException("the command allow list is enforced in the kernel only in the "
                            + "engine's own workspaces (volumes mounted noexec); this directory is not one");
                }
                plan = plan.withScratch(ExecAllowList.scratchMounts(volumePins.dir()));
            }
            if (egress != null) {
                plan = plan.withMounts(egress.mounts(plan, workspaceId));
            }
            SandboxLayout.Plan layout = plan;
            List<String> program = new ArrayList<>();
            program.add(CommandLookup.resolve(spec.cmd(), env.get("PATH"), cwd.toString(),
                    candidate -> HostRunPlace.isExecutableFile(candidate) && visible(layout, candidate)));
            program.addAll(spec.args());
            if (allowList != null) {
                program = new ArrayList<>(allowList.wrap(program, root));
            }
            if (egress != null) {
                program = egress.wrap(program);
            }

            // A group of its own for every run where the host has one: the CPU share, and memory and processes.
            if (cgroups != null) {
                try {
                    group = cgroups.openFor(limits.memoryBytes(), limits.maxProcesses());
                } catch (IOException e) {
                    throw new BackendUnavailableException("cannot create the run's control group for its memory or "
                            + "process limit: " + e.getClass().getSimpleName(), e);
                }
            }
            if (plan != null) {
                plan.createPlaceholders();
            }
            boolean viaBwrap = commandLine.viaBwrap(runProfile);
            List<String> argv = commandLine.argv(runProfile, plan, env, cwd, program, limits, group,
                    SetupStatus.statusFile(privateDir).toString(), user);
            // The launch environment is empty: bubblewrap's own environment is visible in the sandbox as
            // /proc/1/environ, so nothing may be in it. The program's environment travels as --setenv.
            Map<String, String> launchEnv = viaBwrap ? Map.of() : env;
            // Under bubblewrap the launched process is bwrap: a graceful stop must signal the program, not bwrap,
            // whose death ends the namespace at once (--die-with-parent).
            ProgramLaunch launch = new ProgramLaunch(argv, launchEnv, cwd.toString(), spec.stdin(), spec.timeout(),
                    outputCap, spec.outputListener());
            egressRun = egress == null ? null : egress.egress().run(workspaceId);
            return new SandboxRun(viaBwrap ? wrappedChannel : directChannel, launch, group, privateDir, viaBwrap,
                    root, plan, RunHistory.folderName(place.runDir()), allowList != null, egressRun);
        } catch (RuntimeException e) {
            SandboxRun.release(group, plan, privateDir, egressRun);
            throw e;
        }
    }

    /** A candidate command is usable only where the sandbox shows it, by its real path and by its own. */
    private static boolean visible(SandboxLayout.Plan plan, String candidate) {
        if (plan == null) {
            return true;
        }
        try {
            Path p = Path.of(candidate);
            return plan.visible(p.toRealPath().toString()) && plan.visible(p.toAbsolutePath().normalize().toString());
        } catch (IOException e) {
            return false;
        }
    }

    static void validateLimits(ResourceLimits limits) {
        if (limits.maxOpenFiles() != null && limits.maxOpenFiles() < MIN_OPEN_FILES) {
            throw new InvalidSpecException("maxOpenFiles (" + limits.maxOpenFiles() + ") must be at least "
                    + MIN_OPEN_FILES + ": the sandbox itself needs a few descriptors");
        }
    }
}
