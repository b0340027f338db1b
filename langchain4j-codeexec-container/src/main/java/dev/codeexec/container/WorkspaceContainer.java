package dev.codeexec.container;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One workspace's container: its id, the limits it currently has, and how many runs use it (per-run memory and
 * process limits are the container's, applied for the run and restored when no run is left).
 */
final class WorkspaceContainer {

    final String id;
    final Instant created;
    final AtomicInteger activeRuns = new AtomicInteger();
    private Long memoryBytes;
    private Long pids;

    WorkspaceContainer(String id, Instant created, Long memoryBytes, Long pids) {
        this.id = id;
        this.created = created;
        this.memoryBytes = memoryBytes;
        this.pids = pids;
    }

    synchronized Long memoryBytes() {
        return memoryBytes;
    }

    synchronized Long pids() {
        return pids;
    }

    synchronized void limits(Long memoryBytes, Long pids) {
        this.memoryBytes = memoryBytes;
        this.pids = pids;
    }
}
