package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses and resumes every process of one run's control group with {@code SIGSTOP} and {@code SIGCONT}: how a
 * workspace's python kernel is kept still while the host works on the workspace ({@link WorkspaceGates.Occupant}).
 *
 * <p>Why a control group: it holds every process of the run, however it was started (children, daemons that
 * detached, processes of the sandbox's own PID namespace), and a sandboxed process cannot leave it (the control group
 * file systems are read-only in a sandbox). Why signals: {@code SIGSTOP} cannot be caught or ignored, and a stopped
 * process neither runs nor forks nor signals; the cgroup v1 freezer is a hierarchy of its own the run is not in.
 *
 * <p>A pause is confirmed, not assumed: the group's processes are stopped, then each is read back from
 * {@code /proc/<pid>/stat} until it is stopped or gone, and the group is listed again; the pause holds once a listing
 * finds no process it has not stopped. A process that forked between two listings is caught by the next one; one that
 * resumed a stopped sibling before it was stopped itself is stopped again. When the group cannot be confirmed still
 * within {@value #PAUSE_ROUNDS} rounds, or a process stays in a system call past the bound, its processes are
 * killed instead (the kernel is lost and reported so by its next cell) and the pause returns once they are gone; only
 * when even that cannot be confirmed does it throw, and the caller's section does not run.
 *
 * <p>Thread-safe: each call is self-contained (the gate calls it under the workspace's lock).
 */
final class GroupPause implements WorkspaceGates.Occupant {

    private static final Logger LOG = LoggerFactory.getLogger(GroupPause.class);

    /** Listings of the group a pause may take before its processes are killed instead. */
    static final int PAUSE_ROUNDS = 20;
    /** How long a stopped process may take to be seen stopped (it may finish a system call first). */
    static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final String KILL = Files.isExecutable(Path.of("/bin/kill")) ? "/bin/kill" : "/usr/bin/kill";
    private static final long SELF = ProcessHandle.current().pid();

    private final Path procs;

    /** @param procs the group's {@code cgroup.procs} */
    GroupPause(Path procs) {
        this.procs = procs;
    }

    /** The pause of the group whose join file (a run group's {@code procsFiles()} entry) is {@code joinFile}. */
    static GroupPause ofJoinFile(String joinFile) {
        return new GroupPause(Path.of(joinFile).resolveSibling("cgroup.procs"));
    }

    @Override
    public void pause() {
        Set<Long> stopped = new LinkedHashSet<>();
        for (int round = 0; round < PAUSE_ROUNDS; round++) {
            List<Long> members = members();
            if (stopped.containsAll(members) && allStopped(members)) {
                return;
            }
            signal("-STOP", members);
            if (!settle(members)) {
                break;
            }
            stopped.addAll(members);
        }
        LOG.warn("a python kernel's processes could not be paused; they are killed instead");
        killAll();
    }

    @Override
    public void resume() {
        signal("-CONT", members());
    }

    /** Kills every process of the group and returns once none runs. */
    void killAll() {
        for (int round = 0; round < PAUSE_ROUNDS; round++) {
            List<Long> members = members();
            if (members.isEmpty() || allDead(members)) {
                return;
            }
            members.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            settleDead(members);
        }
        throw new BackendUnavailableException("a python kernel's processes could be neither paused nor ended; "
                + "nothing was done in the workspace");
    }

    /** The group's processes now (never this JVM, whose launching thread may be in it for a moment). */
    List<Long> members() {
        List<Long> pids = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(procs, StandardCharsets.US_ASCII)) {
                if (!line.isBlank()) {
                    long pid = Long.parseLong(line.trim());
                    if (pid != SELF) {
                        pids.add(pid);
                    }
                }
            }
        } catch (NoSuchFileException e) {
            return List.of(); // the group is gone with its processes
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot list a python kernel's processes: " + e.getMessage(), e);
        }
        return pids;
    }

    /** Waits until each process is stopped or gone; false past the bound. */
    private static boolean settle(List<Long> pids) {
        long deadline = System.nanoTime() + SETTLE_NANOS;
        for (long pid : pids) {
            while (!isStoppedOrGone(state(pid))) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                LockSupport.parkNanos(50_000);
            }
        }
        return true;
    }

    private static void settleDead(List<Long> pids) {
        long deadline = System.nanoTime() + SETTLE_NANOS;
        while (!allDead(pids) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(200_000);
        }
    }

    private static boolean allStopped(List<Long> pids) {
        return pids.stream().allMatch(pid -> isStoppedOrGone(state(pid)));
    }

    private static boolean allDead(List<Long> pids) {
        return pids.stream().allMatch(pid -> {
            char s = state(pid);
            return s == 0 || s == 'Z' || s == 'X';
        });
    }

    /** T (stopped), t (traced), Z and X (dead) run no code; 0: the process is gone. */
    private static boolean isStoppedOrGone(char state) {
        return state == 0 || state == 'T' || state == 't' || state == 'Z' || state == 'X';
    }

    /** The state letter of {@code /proc/<pid>/stat} (after the command name, which may hold anything), or 0. */
    static char state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
            int end = stat.lastIndexOf(')');
            return end < 0 || end + 2 >= stat.length() ? 0 : stat.charAt(end + 2);
        } catch (IOException e) {
            return 0;
        }
    }

    /** Sends a signal to these processes (the JDK sends only TERM and KILL); an ended process is no failure. */
    private static void signal(String signal, List<Long> pids) {
        if (pids.isEmpty()) {
            return;
        }
        List<String> argv = new ArrayList<>(List.of(KILL, signal));
        pids.forEach(p -> argv.add(Long.toString(p)));
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot signal a python kernel's processes: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted while signalling a python kernel's processes", e);
        }
    }
}
