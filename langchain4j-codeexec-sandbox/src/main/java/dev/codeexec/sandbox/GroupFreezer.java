package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses and resumes every process of one run with the kernel's cgroup freezer: how a workspace's python kernel is
 * kept still while the host works on the workspace ({@link WorkspaceGates.Occupant}), at the cost of a few file
 * writes (a pause by signals, {@link GroupPause}, spawns {@code kill} twice: milliseconds on a busy host).
 *
 * <p>On cgroup v2 the run's own group is frozen ({@code cgroup.freeze}, confirmed by {@code frozen 1} in
 * {@code cgroup.events}). On cgroup v1 the freezer is a hierarchy of its own that the run is not in: the first pause
 * creates a freezer group for the run and moves the run's processes into it (a process forked meanwhile is caught by
 * the next listing; one moved into the frozen group is frozen on arrival), then freezes it ({@code freezer.state}
 * until it reads {@code FROZEN}); its children are born in it, and a sandboxed process cannot leave it (control group
 * file systems are read-only in a sandbox). The pause holds once every process of the run's group is in the frozen
 * group. A group that cannot be frozen within {@link #FREEZE_NANOS} (a process stuck in a system call) is killed
 * instead and the pause returns once its processes are gone (the kernel is lost, and its next cell says so).
 *
 * <p>Thread-safe for the gate's use: pauses and resumes come from the thread that holds the workspace's lock;
 * {@link #close()} (the kernel's release) may come from any thread.
 */
final class GroupFreezer implements WorkspaceGates.Occupant, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GroupFreezer.class);

    /** How long a group may take to freeze (its processes finish their system calls first). */
    static final long FREEZE_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final int MOVE_ROUNDS = 20;
    private static final long SELF = ProcessHandle.current().pid();

    /** The run group's {@code cgroup.procs}: every process of the run. */
    private final Path runProcs;
    /** The group that is frozen: the run's own (v2), or a freezer group of its own (v1). */
    private final Path dir;
    private final boolean v2;

    private GroupFreezer(Path runProcs, Path dir, boolean v2) {
        this.runProcs = runProcs;
        this.dir = dir;
        this.v2 = v2;
    }

    /**
     * The freezer of the run whose join files (a run group's {@code procsFiles()}) are given, or null when this host
     * has none (cgroup v1 without a freezer hierarchy).
     *
     * @throws BackendUnavailableException when the v1 freezer group cannot be created
     */
    static GroupFreezer forRun(List<String> joinFiles) {
        Path runProcs = Path.of(joinFiles.get(0)).resolveSibling("cgroup.procs");
        for (String f : joinFiles) {
            Path d = Path.of(f).getParent();
            if (Files.exists(d.resolve("cgroup.freeze"))) {
                return new GroupFreezer(d.resolve("cgroup.procs"), d, true);
            }
        }
        Path mount = freezerMount();
        if (mount == null) {
            return null;
        }
        Path dir = mount.resolve("codeexec-kernel-" + UUID.randomUUID());
        try {
            Files.createDirectory(dir);
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot create a python kernel's freezer group: " + e, e);
        }
        return new GroupFreezer(runProcs, dir, false);
    }

    /** The cgroup v1 freezer hierarchy's mount point, from this process's mount table; null when there is none. */
    static Path freezerMount() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
                String[] halves = line.split(" - ", 2);
                if (halves.length == 2 && halves[1].startsWith("cgroup ")
                        && List.of(halves[1].split(" ")[2].split(",")).contains("freezer")) {
                    Path p = Path.of(halves[0].split(" ")[4]);
                    return Files.isWritable(p.resolve("cgroup.procs")) ? p : null;
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    @Override
    public void pause() {
        try {
            if (v2) {
                Files.writeString(dir.resolve("cgroup.freeze"), "1");
                if (await(() -> Files.readString(dir.resolve("cgroup.events")).contains("frozen 1"))) {
                    return;
                }
            } else if (freezeV1()) {
                return;
            }
        } catch (NoSuchFileException e) {
            return; // the group is gone with its processes
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot pause a python kernel: " + e.getMessage(), e);
        }
        LOG.warn("a python kernel's processes could not be frozen; they are killed instead");
        killAll();
    }

    /** Moves the run's processes into the freezer group and freezes it; false when it did not hold in time. */
    private boolean freezeV1() throws IOException {
        Path procs = dir.resolve("cgroup.procs");
        for (int round = 0; round < MOVE_ROUNDS; round++) {
            Set<Long> inFreezer = new HashSet<>(pids(procs));
            List<Long> strays = pids(runProcs).stream().filter(p -> !inFreezer.contains(p)).toList();
            if (strays.isEmpty() && round > 0) {
                return true;
            }
            for (long pid : strays) {
                try {
                    Files.writeString(procs, Long.toString(pid));
                } catch (IOException e) {
                    // It ended meanwhile (ESRCH): nothing to move.
                }
            }
            Files.writeString(dir.resolve("freezer.state"), "FROZEN");
            if (!await(() -> Files.readString(dir.resolve("freezer.state")).strip().equals("FROZEN"))) {
                return false;
            }
        }
        return false;
    }

    @Override
    public void resume() {
        try {
            if (v2) {
                Files.writeString(dir.resolve("cgroup.freeze"), "0");
            } else {
                Files.writeString(dir.resolve("freezer.state"), "THAWED");
            }
        } catch (IOException e) {
            LOG.debug("could not resume a python kernel (gone?): {}", e.toString());
        }
    }

    /** Kills every process of the run (frozen ones are thawed so that they die) and returns once none runs. */
    void killAll() {
        long deadline = System.nanoTime() + FREEZE_NANOS;
        do {
            List<Long> members;
            try {
                members = pids(runProcs);
            } catch (IOException e) {
                return;
            }
            if (members.isEmpty()) {
                return;
            }
            members.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            resume();
            LockSupport.parkNanos(1_000_000);
        } while (System.nanoTime() < deadline);
        throw new BackendUnavailableException("a python kernel's processes could be neither paused nor ended; "
                + "nothing was done in the workspace");
    }

    /** Lets the group's processes run (a v2 run group is reused by later runs) and removes a v1 freezer group. */
    @Override
    public void close() {
        resume();
        if (!v2) {
            for (int attempt = 0; attempt < 50; attempt++) {
                try {
                    Files.deleteIfExists(dir);
                    return;
                } catch (IOException e) {
                    LockSupport.parkNanos(20_000_000); // a killed process may be a zombie for a moment
                }
            }
            LOG.warn("could not remove a python kernel's freezer group {}", dir);
        }
    }

    /** The processes of a {@code cgroup.procs} (never this JVM); empty when the group is gone. */
    static List<Long> pids(Path procs) throws IOException {
        try {
            return Files.readAllLines(procs, StandardCharsets.US_ASCII).stream().filter(l -> !l.isBlank())
                    .map(l -> Long.parseLong(l.strip())).filter(p -> p != SELF).toList();
        } catch (NoSuchFileException e) {
            return List.of();
        }
    }

    /** The group this freezer freezes: for tests. */
    Path frozenGroup() {
        return dir;
    }

    private interface Check {
        boolean holds() throws IOException;
    }

    private static boolean await(Check c) throws IOException {
        long deadline = System.nanoTime() + FREEZE_NANOS;
        long park = 10_000;
        while (!c.holds()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, 1_000_000);
        }
        return true;
    }
}
