package dev.codeexec.sandbox;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.spi.host.Cgroups;
import java.util.EnumSet;
import java.util.Set;

/** What a sandbox engine declares it enforces, from what this host gave it: one place for the rule. */
final class SandboxCapabilities {

    private SandboxCapabilities() {
    }

    /**
     * @param cgroups           the host's control groups, or null
     * @param processesByRlimit whether a run's processes can be bounded by {@code RLIMIT_NPROC} inside the sandbox
     * @param diskQuota         whether workspaces are volumes with a quota
     */
    static Capabilities of(SandboxPlatform platform, PermissionProfile profile, Cgroups cgroups,
                           boolean processesByRlimit, boolean diskQuota) {
        Set<ResourceLimit> limits = EnumSet.of(ResourceLimit.CPU_TIME, ResourceLimit.FILE_SIZE,
                ResourceLimit.OPEN_FILES);
        if (cgroups != null && cgroups.memory()) {
            limits.add(ResourceLimit.MEMORY);
        }
        if (cgroups != null && cgroups.pids() || processesByRlimit && profile.enforcement()
                == PermissionProfile.Enforcement.MANAGED) {
            limits.add(ResourceLimit.PROCESSES);
        }
        Isolation isolation = switch (profile.enforcement()) {
            case MANAGED -> Isolation.OS_SANDBOX;
            case DISABLED -> Isolation.NONE;
            case EXTERNAL -> Isolation.EXTERNAL;
        };
        return Capabilities.builder()
                .isolation(isolation)
                .networkAllowed(profile.network() == NetworkMode.ENABLED)
                .readOnlyMount(profile.enforcement() == PermissionProfile.Enforcement.MANAGED)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(limits)
                .diskQuota(diskQuota)
                .build();
    }
}
