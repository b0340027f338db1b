package dev.codeexec.spi.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory and process-count limits, and a fair share of the CPU, through control groups, v1 or v2, whichever hierarchy
 * carries the controller on this host: the one implementation of the host backends (sandbox, local). Host-family SPI
 * (see the package).
 *
 * <p>A run in its own {@code cpu} group competes for the CPU as one entity with the other runs and with the host's
 * own processes, however many processes it starts (a fork bomb gets one share, not one per process), so that other
 * runs keep working. Each engine gets a directory {@code codeexec-<pid>-<n>} under the JVM's own cgroup of each
 * controller; each run gets a child {@code run-<n>} (kept for reuse while it is empty) that the launching shell joins
 * (writing "0", itself, to one of {@link RunGroup#procsFiles()}) before it {@code exec}s the run (bubblewrap, or the
 * local engine's PID-namespace wrapper), so every process of the run is counted from the start.
 *
 * <p>Usable only where the JVM may create cgroups (root, or a delegated v2 subtree); otherwise the limit is reported
 * as not enforceable and runs that request it are refused.
 */
public final class Cgroups implements AutoCloseable {

    private static final AtomicInteger ENGINES = new AtomicInteger();
    private static final AtomicLong RUNS = new AtomicLong();
    /** One controller's engine directory. */
    private record Controller(String name, Path base, boolean v2) {
    }

    private final Controller memory;
    private final Controller pids;
    private final Controller cpu;

    private Cgroups(Controller memory, Controller pids, Controller cpu) {
        this.memory = memory;
        this.pids = pids;
        this.cpu = cpu;
    }

    /** Tests only: behave as on a host without usable control groups. */
    public static volatile boolean unavailableForTests;

    /** Detects and prepares the controllers; never throws (an unusable controller is simply absent). */
    public static Cgroups detect() {
        if (unavailableForTests) {
            return new Cgroups(null, null, null);
        }
        String suffix = "codeexec-" + ProcessHandle.current().pid() + "-" + ENGINES.incrementAndGet();
        List<String> mountinfo;
        List<String> self;
        try {
            mountinfo = Files.readAllLines(Path.of("/proc/self/mountinfo"));
            self = Files.readAllLines(Path.of("/proc/self/cgroup"));
        } catch (IOException | RuntimeException e) {
            return new Cgroups(null, null, null);
        }
        Controller mem = prepare("memory", suffix, mountinfo, self);
        Controller pid = prepare("pids", suffix, mountinfo, self);
        Controller c = prepare("cpu", suffix, mountinfo, self);
        return new Cgroups(mem, pid, c);
    }

    public boolean memory() {
        return memory != null;
    }

    public boolean pids() {
        return pids != null;
    }

    /** True when each run gets its own CPU share. */
    public boolean cpu() {
        return cpu != null;
    }

    /** Human-readable summary for logs. */
    public String describe() {
        return "memory=" + (memory == null ? "unavailable" : memory.v2 ? "cgroup2" : "cgroup1")
                + ", pids=" + (pids == null ? "unavailable" : pids.v2 ? "cgroup2" : "cgroup1")
                + ", cpu=" + (cpu == null ? "unavailable" : cpu.v2 ? "cgroup2" : "cgroup1");
    }

    private static Controller prepare(String name, String suffix, List<String> mountinfo, List<String> self) {
        Optional<Path> v1 = CgroupHierarchy.v1Dir(name, mountinfo, self);
        if (v1.isPresent()) {
            Path base = v1.get().resolve(suffix);
            if (CgroupHierarchy.tryCreate(base) && Files.isWritable(base.resolve("cgroup.procs"))) {
                return new Controller(name, base, false);
            }
            return null;
        }
        Optional<Path> v2 = CgroupHierarchy.v2Dir(mountinfo, self);
        if (v2.isEmpty()) {
            return null;
        }
        Path own = v2.get();
        try {
            String controllers = Files.readString(own.resolve("cgroup.controllers"));
            if (!List.of(controllers.trim().split("\\s+")).contains(name)) {
                return null;
            }
            String enabled = Files.readString(own.resolve("cgroup.subtree_control"));
            if (!List.of(enabled.trim().split("\\s+")).contains(name)) {
                // Fails with EBUSY when the JVM's own cgroup holds processes (the "no internal processes" rule).
                Files.writeString(own.resolve("cgroup.subtree_control"), "+" + name);
            }
            Path base = own.resolve(suffix);
            if (!CgroupHierarchy.tryCreate(base)) {
                return null;
            }
            Files.writeString(base.resolve("cgroup.subtree_control"), "+" + name);
            return new Controller(name, base, true);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The groups of one run, where the run needs any: a memory limit, a process limit this host can enforce, or (on
     * every run where the host has the cpu controller) a CPU share of its own. The one rule of when a host run gets
     * control groups.
     *
     * @param memoryBytes memory limit, or null (the caller has checked that the host enforces it)
     * @param maxPids     process limit, or null; ignored without a pids controller (the caller enforces it otherwise)
     * @return the run's groups, or null when it needs none
     * @throws IOException when a group cannot be created or a limit written
     */
    public RunGroup openFor(Long memoryBytes, Integer maxPids) throws IOException {
        Integer processes = pids() ? maxPids : null;
        if (memoryBytes == null && processes == null && !cpu()) {
            return null;
        }
        return open(memoryBytes, processes);
    }

    /**
     * Creates the cgroups of one run and writes its limits; the run also gets a CPU group of its own (the default
     * weight) where the cpu controller is available.
     *
     * @param memoryBytes memory limit, or null
     * @param maxPids     process limit, or null
     * @return the run's groups; the caller passes {@link RunGroup#procsFiles()} to the launcher and closes it after
     * @throws IOException when a group cannot be created or a limit written
     */
    public RunGroup open(Long memoryBytes, Integer maxPids) throws IOException {
        RunGroup reused = reuse(memoryBytes, maxPids);
        if (reused != null) {
            return reused;
        }
        RunGroup g = open("run-" + RUNS.incrementAndGet(), memoryBytes, maxPids);
        g.owner = this;
        return g;
    }

    /** Most empty run groups kept for reuse: creating and removing control groups costs about a millisecond a run. */
    static final int MAX_IDLE = 16;
    private final java.util.ArrayDeque<RunGroup> idle = new java.util.ArrayDeque<>();
    private boolean closed;

    /** An idle group with the same controllers, given the new limits; null when there is none. */
    private RunGroup reuse(Long memoryBytes, Integer maxPids) {
        while (true) {
            RunGroup g;
            synchronized (this) {
                g = null;
                for (java.util.Iterator<RunGroup> it = idle.iterator(); it.hasNext(); ) {
                    RunGroup c = it.next();
                    if ((c.memoryBytes != null) == (memoryBytes != null) && (c.maxPids != null) == (maxPids != null)) {
                        it.remove();
                        g = c;
                        break;
                    }
                }
            }
            if (g == null) {
                return null;
            }
            try {
                if (!java.util.Objects.equals(g.memoryBytes, memoryBytes) || !java.util.Objects.equals(g.maxPids,
                        maxPids)) {
                    g.limit(memoryBytes, maxPids);
                }
                return g;
            } catch (IOException e) {
                g.remove(); // a lower memory limit the kernel could not reclaim down to: a fresh group instead
            }
        }
    }

    /** Takes back an empty group for reuse; false when it should be removed instead. */
    private synchronized boolean takeBack(RunGroup g) {
        if (closed || idle.size() >= MAX_IDLE) {
            return false;
        }
        idle.add(g);
        return true;
    }

    /** The engine's one group for planned launches (the sandbox's {@code plannedLaunch}), kept until it closes. */
    private RunGroup planned;

    /**
     * The group a planned launch joins: one per engine, with the limits of {@code like} (the run group it stands
     * for), kept until {@link #close()} so that the launch can be started later, as often as wanted, and pays what a
     * run pays (joining control groups has a cost of its own: on most kernels a grace period of the kernel's RCU).
     */
    public synchronized RunGroup planned(RunGroup like) throws IOException {
        if (planned == null) {
            planned = open("planned", like.memoryBytes, like.maxPids);
        } else if (!java.util.Objects.equals(planned.memoryBytes, like.memoryBytes)
                || !java.util.Objects.equals(planned.maxPids, like.maxPids)) {
            planned.limit(like.memoryBytes, like.maxPids);
        }
        return planned;
    }

    private RunGroup open(String name, Long memoryBytes, Integer maxPids) throws IOException {
        List<Path> dirs = new ArrayList<>();
        RunGroup group = new RunGroup(dirs);
        group.memoryBytes = memoryBytes;
        group.maxPids = maxPids;
        try {
            if (memoryBytes != null) {
                Path d = dir(memory, name, dirs);
                if (memory.v2) {
                    Files.writeString(d.resolve("memory.max"), Long.toString(memoryBytes));
                    Path swap = d.resolve("memory.swap.max");
                    if (Files.exists(swap)) {
                        Files.writeString(swap, "0");
                    }
                } else {
                    Files.writeString(d.resolve("memory.limit_in_bytes"), Long.toString(memoryBytes));
                    Path memsw = d.resolve("memory.memsw.limit_in_bytes");
                    if (Files.exists(memsw)) {
                        // Memory plus swap equal to memory: the run cannot escape the limit into swap.
                        Files.writeString(memsw, Long.toString(memoryBytes));
                    }
                }
            }
            if (maxPids != null) {
                Files.writeString(dir(pids, name, dirs).resolve("pids.max"), Integer.toString(maxPids));
                group.processes = true;
            }
            if (cpu != null) {
                dir(cpu, name, dirs);
            }
            group.controllers = new Controller[]{memoryBytes == null ? null : memory, maxPids == null ? null : pids};
            group.joinFiles = dirs.stream().map(d -> d.resolve(Files.exists(d.resolve("tasks")) ? "tasks"
                    : "cgroup.procs").toString()).toList();
            group.pidsDir = maxPids == null ? null : pids.base.resolve(name);
            group.homes = ThreadJoin.homes(dirs);
            return group;
        } catch (IOException | RuntimeException e) {
            group.close();
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    /** The run's directory of one controller (one shared directory for every controller of cgroup v2). */
    private static Path dir(Controller c, String name, List<Path> dirs) throws IOException {
        Path d = c.base.resolve(name);
        if (!dirs.contains(d)) {
            if (!Files.isDirectory(d)) {
                Files.createDirectory(d);
            }
            dirs.add(d);
        }
        return d;
    }

    /** Removes the engine's directories (runs still alive keep theirs until they end). */
    @Override
    public void close() {
        List<RunGroup> drop;
        synchronized (this) {
            closed = true;
            drop = new ArrayList<>(idle);
            idle.clear();
            if (planned != null) {
                drop.add(planned);
            }
        }
        drop.forEach(RunGroup::remove);
        // Wait a little for the last runs' groups to empty (a killed process may be a zombie for a moment), so that a
        // JVM exiting right after close() leaves no group behind; what is still busy then is removed in background.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (Controller c : new Controller[]{memory, pids, cpu}) {
            while (c != null && Files.isDirectory(c.base) && System.nanoTime() < deadline) {
                try (var children = Files.list(c.base)) {
                    children.filter(Files::isDirectory).forEach(d -> {
                        CgroupReaper.killAll(d);
                        try {
                            Files.deleteIfExists(d);
                        } catch (IOException busy) {
                            // Still a process in it: retried below.
                        }
                    });
                    Files.deleteIfExists(c.base);
                } catch (IOException busy) {
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
        }
        for (Controller c : new Controller[]{memory, pids, cpu}) {
            if (c != null) {
                CgroupReaper.removeLater(c.base, 0);
            }
        }
    }

    /** The cgroups of one run. */
    public static final class RunGroup implements AutoCloseable {
        private final List<Path> dirs;
        /** The engine's groups, which take an empty run group back for the next run; null: never reused. */
        private Cgroups owner;
        private boolean processes;
        private Long memoryBytes;
        private Integer maxPids;
        /** The memory and pids controllers of the limits written, for {@link #limit}. */
        private Controller[] controllers = new Controller[2];
        private List<String> joinFiles = List.of();
        /** The pids controller's group, or null. */
        private Path pidsDir;
        /** Each group's parent's {@code tasks} (cgroup v1), where a launching thread goes back to; null on v2. */
        private List<Path> homes;

        RunGroup(List<Path> dirs) {
            this.dirs = dirs;
        }

        /** Writes other limits into the groups this group already has (a planned launch's). */
        public synchronized void limit(Long memoryBytes, Integer maxPids) throws IOException {
            for (Path d : dirs) {
                if (memoryBytes != null && controllers[0] != null && d.startsWith(controllers[0].base)) {
                    String limit = controllers[0].v2 ? "memory.max" : "memory.limit_in_bytes";
                    Path memsw = d.resolve("memory.memsw.limit_in_bytes");
                    boolean swap = !controllers[0].v2 && Files.exists(memsw);
                    // Memory may never exceed memory plus swap: raise the sum first, lower it last.
                    if (swap && this.memoryBytes != null && memoryBytes > this.memoryBytes) {
                        Files.writeString(memsw, Long.toString(memoryBytes));
                    }
                    Files.writeString(d.resolve(limit), Long.toString(memoryBytes));
                    if (swap) {
                        Files.writeString(memsw, Long.toString(memoryBytes));
                    }
                }
                if (maxPids != null && controllers[1] != null && d.startsWith(controllers[1].base)) {
                    Files.writeString(d.resolve("pids.max"), Integer.toString(maxPids));
                }
            }
            this.memoryBytes = memoryBytes;
            this.maxPids = maxPids;
        }

        /**
         * True when a launcher thread can put the run's first process into these groups itself ({@link #spawn}),
         * without a launching shell: every group is in a cgroup v1 hierarchy, and the process limit, if any, is not so
         * small that the thread's own place in it for a moment matters.
         */
        public synchronized boolean spawnsFromThread() {
            return homes != null && (maxPids == null || maxPids >= ThreadJoin.MIN_PROCESSES);
        }

        /**
         * Starts the run's first process inside these groups: the calling thread joins them, forks, and goes back to
         * its own groups before this returns, whatever happens. Only where {@link #spawnsFromThread()}.
         *
         * @throws dev.codeexec.engine.BackendUnavailableException when the groups cannot be joined (nothing was run)
         */
        public Process spawn(java.util.function.Supplier<Process> fork) {
            return ThreadJoin.spawn(dirs, homes, pidsDir, fork);
        }

        /** True when the group holds the run's process limit. */
        public boolean limitsProcesses() {
            return processes;
        }

        /**
         * The files the launching shell joins the groups through, writing "0" (itself): {@code tasks} in a cgroup v1
         * hierarchy, {@code cgroup.procs} in cgroup v2. Moving the current, single-threaded task through v1's
         * {@code tasks} needs no global lock, where {@code cgroup.procs} waits for a grace period of the kernel's RCU
         * (about 15 ms on a busy 2-vCPU host) whenever no other move happened just before, that is for nearly
         * every run.
         */
        public List<String> procsFiles() {
            return joinFiles;
        }

        /**
         * Kills whatever is left in the groups; when they are empty then (no process, none still counted), the engine
         * keeps them for another run, else they are removed (in the background while they are not empty yet).
         */
        @Override
        public void close() {
            // One look is enough while no process is left: every process of the run is in all its groups (it was
            // born in them; a sandboxed run cannot move anything, the control group file systems are read-only there).
            boolean empty = dirs.isEmpty() || isEmpty(pidsDir != null ? pidsDir : dirs.get(0));
            if (!empty) {
                for (Path d : dirs) {
                    CgroupReaper.killAll(d);
                }
            }
            if (!(empty && owner != null && owner.takeBack(this))) {
                remove();
            }
        }

        /** Kills what is left and removes the groups. */
        public void remove() {
            for (Path d : dirs) {
                CgroupReaper.killAll(d);
                CgroupReaper.removeLater(d, 0);
            }
        }

        /** No process in the group: pids.current 0 (it counts processes not yet reaped too), or no member at all. */
        private boolean isEmpty(Path d) {
            try {
                if (d.equals(pidsDir)) {
                    return Files.readString(d.resolve("pids.current")).strip().equals("0");
                }
                return Files.readString(d.resolve("cgroup.procs"), StandardCharsets.US_ASCII).isBlank();
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }
    }
}
