package dev.codeexec.container;

import java.time.Duration;

/** The resolved settings of a {@link ContainerEngine}: what every workspace container is created with. */
record ContainerSettings(String image, String network, int uid, int gid, boolean readOnlyRootFilesystem,
                         Long memoryBytes, Long pids, Long nanoCpus, String runtime, int poolSize,
                         Duration poolIdle, Long openFilesRlimit, Long processesRlimit) {
}
