package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CommandAllowListEnforcement;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.spi.host.Cgroups;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;

/**
 * What this host gives a sandbox engine, found once at its start: the preflight's result (bubblewrap and how it
 * mounts {@code /proc}), the user programs run as, the control groups, and the run limits the kernel can enforce.
 *
 * @param preflight the preflight's result, or null when the engine does not use bubblewrap
 * @param user      who programs run as: never root where the platform allows
 * @param cgroups   the host's control groups, or null
 * @param runLimits the limits a run can get without control groups
 */
record SandboxHost(Preflight.Result preflight, SandboxUser user, Cgroups cgroups, RunLimits runLimits) {

    /**
     * Checks the host: where bubblewrap is used, prepares the sandbox user (it must reach the engine's directories)
     * and runs the preflight; refuses a macOS sandbox without {@code sandbox-exec}.
     *
     * @param bwrap      bubblewrap's path, or null when the engine does not use it
     * @param workspaces the directory of the workspaces
     * @param uid        the builder's sandbox user, or null for the default (see {@link SandboxUser#detect})
     * @param gid        the builder's sandbox group, or null for the default
     * @throws BackendUnavailableException when the sandbox cannot run on this host
     */
    static SandboxHost check(SandboxPlatform platform, PermissionProfile profile, String bwrap, PreflightMode mode,
                             SandboxRoot root, Path workspaces, Integer uid, Integer gid) {
        SandboxUser wanted = bwrap != null ? SandboxUser.detect(uid, gid) : null;
        if (wanted != null) {
            wanted.prepare(workspaces, root.root, root.state, root.runs, workspaces);
        }
        Preflight.Result preflight = bwrap != null ? Preflight.check(bwrap, mode == null ? PreflightMode.STRICT : mode,
                root.state, wanted) : null;
        SandboxUser user = preflight != null && preflight.user() != null ? preflight.user()
                : SandboxUser.of(SandboxUser.Mode.SAME, -1, -1, null);
        if (platform == SandboxPlatform.MACOS_SEATBELT && profile.enforcement() == PermissionProfile.Enforcement.MANAGED
                && !Files.isExecutable(Path.of(SeatbeltProfile.SANDBOX_EXEC))) {
            throw new BackendUnavailableException("sandbox preflight failed: " + SeatbeltProfile.SANDBOX_EXEC
                    + " is missing; the macOS sandbox cannot run. The engine never runs programs without it.");
        }
        Cgroups cgroups = platform == SandboxPlatform.LINUX_BWRAP ? Cgroups.detect() : null;
        RunLimits runLimits = platform == SandboxPlatform.LINUX_BWRAP
                ? RunLimits.detect(SandboxCommandLine.SHELL, user, cgroups != null && cgroups.pids())
                : RunLimits.none();
        return new SandboxHost(preflight, user, cgroups, runLimits);
    }

    /** The engine's capabilities on this host, with its egress control and the allow list's enforcement. */
    Capabilities capabilities(SandboxPlatform platform, PermissionProfile profile, boolean diskQuota, boolean egress,
                              boolean kernelAllowList) {
        Capabilities caps = SandboxCapabilities.of(platform, profile, cgroups, runLimits.processesByRlimit(),
                diskQuota);
        return caps.toBuilder().egressControl(egress ? EgressControl.PROXY : EgressControl.NONE)
                .commandAllowListEnforcement(kernelAllowList ? CommandAllowListEnforcement.KERNEL
                        : caps.commandAllowListEnforcement()).build();
    }

    /** What bounds runs' memory and processes here, for messages. */
    String limitsSupport() {
        return cgroups == null ? "no control groups" : cgroups.describe();
    }

    /** Logs what an operator must know about the engine just built: no sandbox at all, limits it cannot bound. */
    void logStart(Logger log, SandboxPlatform platform, PermissionProfile profile, String profileName,
                  Capabilities capabilities, Object defaultLimits) {
        if (profile.enforcement() == PermissionProfile.Enforcement.DISABLED) {
            log.warn("SandboxEngine uses PermissionProfile.dangerFullAccess(): programs run WITHOUT a sandbox, with "
                    + "the host's files and network");
        }
        String unbounded = platform == SandboxPlatform.LINUX_BWRAP
                ? RunLimits.unbounded(capabilities.enforcedLimits()) : "";
        if (!unbounded.isEmpty()) {
            log.warn("SandboxEngine cannot bound the {} of a run on this host ({}): a program can exhaust them. "
                    + "Memory and process limits need control groups the engine may create (root, or a delegated "
                    + "cgroup v2 subtree); processes also work through RLIMIT_NPROC when programs do not run as root "
                    + "(Linux 5.14 or later). See docs/sandbox.md, Resource limits", unbounded, limitsSupport());
        }
        log.info("SandboxEngine ready: platform={}, profile={}, network={}, cgroups={}, programs as {}, default "
                + "limits={}", platform, profileName, profile.network().id(),
                cgroups == null ? "n/a" : cgroups.describe(), user.describe(), defaultLimits);
    }
}
