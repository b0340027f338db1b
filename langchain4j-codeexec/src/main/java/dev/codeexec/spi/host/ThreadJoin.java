package dev.codeexec.spi.host;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run's first process created directly in its control groups, without a launching shell: on cgroup v1 a thread
 * may move itself alone ({@code "0"} written to a group's {@code tasks}, which needs no global lock), and a process
 * is born in the groups of the thread that forks it. So the launcher thread joins the run's groups, forks, and goes
 * back to its own groups; the run is counted and limited from its first instruction, as with the shell.
 *
 * <p>What it takes care of:
 * <ul>
 *   <li>the thread always goes back, also when the fork fails; a group it could not join is left at once, and the
 *       launch fails with nothing run;</li>
 *   <li>a JVM thread started by the launcher thread while it is inside (the JDK starts a "process reaper" thread
 *       from the forking thread when it has no idle one) is born in the run's groups: it is found in them after the
 *       fork and moved back to the JVM's own groups;</li>
 *   <li>the limit is never exceeded: the thread is counted like one of the run's processes while it is inside.
 *       It leaves with its next writes after the fork returned, when the run's first program has just been
 *       executed; only a run that had started all but one of its allowed processes before those writes could be
 *       refused one. A process limit below {@link #MIN_PROCESSES}, where that is within reach of a program's first
 *       instants, keeps the launching shell.</li>
 * </ul>
 * On cgroup v2 a thread cannot be in a domain group of its own, so runs there keep the launching shell.
 */
final class ThreadJoin {

    private static final Logger LOG = LoggerFactory.getLogger(ThreadJoin.class);

    /** The smallest process limit of a run started from a thread; smaller ones join through the shell. */
    static final int MIN_PROCESSES = 16;

    private static final byte[] SELF = "0".getBytes(StandardCharsets.US_ASCII);
    private static final Path OWN_TASKS = Path.of("/proc/self/task");
    /** Counts every thread this JVM started: unchanged across a fork, no thread was born in the run's groups. */
    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    private ThreadJoin() {
    }

    /**
     * The {@code tasks} file of each group's parent (the JVM's own group of that hierarchy, where a launcher
     * thread lives), or null when a group is not in a cgroup v1 hierarchy.
     */
    static List<Path> homes(List<Path> dirs) {
        List<Path> homes = new ArrayList<>();
        for (Path d : dirs) {
            Path home = d.getParent() == null ? null : d.getParent().getParent();
            if (home == null || !Files.exists(d.resolve("tasks")) || !Files.exists(home.resolve("tasks"))) {
                return null;
            }
            homes.add(home.resolve("tasks"));
        }
        return dirs.isEmpty() ? null : List.copyOf(homes);
    }

    /** Joins {@code dirs}, runs {@code fork}, and goes back to {@code homes}; see the class. */
    static Process spawn(List<Path> dirs, List<Path> homes, Path pidsDir, Supplier<Process> fork) {
        int joined = 0;
        long threadsBefore = THREADS.getTotalStartedThreadCount();
        try {
            for (Path d : dirs) {
                Files.write(d.resolve("tasks"), SELF);
                joined++;
            }
        } catch (IOException | RuntimeException e) {
            leave(homes, joined);
            throw new BackendUnavailableException(HostRuns.JOIN_FAILED_MESSAGE + "; nothing was run", e);
        }
        try {
            return fork.get();
        } finally {
            leave(homes, joined);
            if (THREADS.getTotalStartedThreadCount() != threadsBefore) {
                moveOutJvmThreads(pidsDir != null ? pidsDir : dirs.get(0), homes);
            }
        }
    }

    /** The calling thread back to its own groups; a failed write is retried once, then logged. */
    private static void leave(List<Path> homes, int joined) {
        for (int i = 0; i < joined; i++) {
            Path home = homes.get(i);
            try {
                Files.write(home, SELF);
            } catch (IOException first) {
                try {
                    Files.write(home, SELF);
                } catch (IOException e) {
                    LOG.warn("a launcher thread could not go back to its control group {}: {}", home, e.toString());
                }
            }
        }
    }

    /** Threads of this JVM born in the run's groups while the launcher was in them, moved back to their homes. */
    private static void moveOutJvmThreads(Path dir, List<Path> homes) {
        List<String> tasks;
        try {
            tasks = Files.readAllLines(dir.resolve("tasks"), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return;
        }
        for (String line : tasks) {
            String tid = line.strip();
            if (!tid.isEmpty() && Files.exists(OWN_TASKS.resolve(tid))) {
                for (Path home : homes) {
                    try {
                        Files.writeString(home, tid);
                    } catch (IOException e) {
                        LOG.warn("could not move thread {} of this JVM out of a run's control group: {}", tid,
                                e.toString());
                    }
                }
            }
        }
    }
}
