package dev.codeexec.container;

import dev.codeexec.engine.InvalidSpecException;
import java.time.Duration;

/** The resolved settings of a {@link ContainerEngine}: what every workspace container is created with. */
record ContainerSettings(String image, String network, int uid, int gid, boolean readOnlyRootFilesystem,
                         Long memoryBytes, Long pids, Long nanoCpus, String runtime, int poolSize,
                         Duration poolIdle, Long openFilesRlimit, Long processesRlimit) {

    /**
     * The settings of a builder's values (each null for the engine's default), checked.
     *
     * @throws InvalidSpecException for a missing image or a value out of range
     */
    static ContainerSettings resolve(String image, boolean network, Integer uid, Integer gid, boolean readOnlyRoot,
                                     Long memoryBytes, Integer processes, Double cpus, String runtime,
                                     Integer poolSize, Duration poolIdle, Long openFilesRlimit,
                                     Long processesRlimit) {
        if (image == null || image.isBlank()) {
            throw new InvalidSpecException("image must be set: the operator chooses the workspace image");
        }
        long mem = memoryBytes == null ? ContainerEngine.DEFAULT_MEMORY_BYTES : memoryBytes;
        long pids = processes == null ? ContainerEngine.DEFAULT_PROCESSES : processes;
        double cpu = cpus == null ? ContainerEngine.DEFAULT_CPUS : cpus;
        if (mem < (6L << 20)) {
            throw new InvalidSpecException("memoryBytes (" + mem + ") must be at least 6 MiB (Docker's minimum)");
        }
        if (pids < 8) {
            throw new InvalidSpecException("processes (" + pids + ") must be at least 8");
        }
        if (cpu <= 0) {
            throw new InvalidSpecException("cpus (" + cpu + ") must be positive");
        }
        int pool = poolSize == null ? 0 : poolSize;
        if (pool < 0) {
            throw new InvalidSpecException("poolSize (" + pool + ") must not be negative");
        }
        int u = uid == null ? ContainerEngine.DEFAULT_UID : uid;
        return new ContainerSettings(image, network ? "bridge" : "none", u, gid == null ? u : gid, readOnlyRoot, mem,
                pids, (long) (cpu * 1e9), runtime, pool, poolIdle == null ? ContainerEngine.DEFAULT_POOL_IDLE
                : poolIdle, openFilesRlimit, processesRlimit);
    }
}
