package dev.codeexec.sandbox;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The default bounds of every run, and the process limit on hosts without a {@code pids} control group.
 *
 * <p><b>Defaults.</b> Every run is bounded unless the caller raises a bound: {@value #DEFAULT_MEMORY_MIB} MiB of
 * memory (a control group; the OOM killer ends the run beyond it) and {@value #DEFAULT_MAX_PROCESSES} processes and
 * threads (a control group, or {@code RLIMIT_NPROC} inside the run's user namespace), each where this host can
 * enforce it; on the remaining hosts the engine says at build time which bound it cannot set. Limits a caller sets
 * replace the defaults field by field, and are enforced or refused, never ignored; {@link ResourceLimits#NONE} set on
 * purpose turns the defaults off.
 *
 * <p><b>Processes without a control group.</b> {@code RLIMIT_NPROC} counts the processes of a user, and on Linux
 * 5.14 and later it counts them per user namespace: set inside the sandbox (which has a user namespace of its own),
 * it bounds exactly the run's processes, whatever else the same user runs on the host. It does not apply to host
 * root, which is one more reason programs never run as root ({@link SandboxUser}). Set before the sandbox starts it
 * would count every process of the user on the host, so it is set inside: the program is started by the shell with
 * {@code ulimit}, which lowers the limit and {@code exec}s it (no process stays behind).
 */
final class RunLimits {

    static final int DEFAULT_MEMORY_MIB = 2048;
    static final long DEFAULT_MEMORY_BYTES = (long) DEFAULT_MEMORY_MIB << 20;
    static final int DEFAULT_MAX_PROCESSES = 1024;

    /** The shell's option for RLIMIT_NPROC ({@code -u} in bash and busybox, {@code -p} in dash), or null. */
    private final String ulimitOption;
    private final String shell;
    private final long hardLimit;

    private RunLimits(String shell, String ulimitOption, long hardLimit) {
        this.shell = shell;
        this.ulimitOption = ulimitOption;
        this.hardLimit = hardLimit;
    }

    /** A host where process limits come from control groups only. */
    static RunLimits none() {
        return new RunLimits(null, null, Long.MAX_VALUE);
    }

    /**
     * Finds out whether a run's processes can be limited without a control group here: the programs must not be host
     * root, the kernel must count RLIMIT_NPROC per user namespace (5.14 and later), and the shell must set it.
     */
    static RunLimits detect(String shell, SandboxUser user, boolean pidsCgroup) {
        if (pidsCgroup || !user.unprivileged() || !kernelAtLeast(System.getProperty("os.version", ""), 5, 14)) {
            return none();
        }
        long soft = limit("Max processes", 1);
        long hard = limit("Max processes", 2);
        for (String option : List.of("-u", "-p")) {
            String out = run(shell, "ulimit " + option);
            if (out != null && (out.equals("unlimited") ? soft == Long.MAX_VALUE : out.equals(Long.toString(soft)))) {
                return new RunLimits(shell, option, hard);
            }
        }
        return none();
    }

    /** True when {@link ResourceLimits#maxProcesses()} is enforced without a control group. */
    boolean processesByRlimit() {
        return ulimitOption != null;
    }

    /**
     * What runs the program inside the sandbox so that at most {@code maxProcesses} processes of the run exist: the
     * shell lowers RLIMIT_NPROC (hard and soft) and executes the program in its place. Empty when no limit is asked
     * for or a control group holds it.
     */
    List<String> inside(Integer maxProcesses) {
        if (maxProcesses == null || ulimitOption == null) {
            return List.of();
        }
        long n = Math.min(maxProcesses, hardLimit);
        return List.of(shell, "-c", "ulimit " + ulimitOption + " \"$1\" || exit 125; shift; exec \"$@\"",
                "codeexec-limits", Long.toString(n));
    }

    /** The default bounds this host can enforce (see the class comment). */
    static ResourceLimits defaults(Set<ResourceLimit> enforced) {
        ResourceLimits.Builder b = ResourceLimits.builder();
        if (enforced.contains(ResourceLimit.MEMORY)) {
            b.memoryBytes(DEFAULT_MEMORY_BYTES);
        }
        if (enforced.contains(ResourceLimit.PROCESSES)) {
            b.maxProcesses(DEFAULT_MAX_PROCESSES);
        }
        return b.build();
    }

    /**
     * {@code configured}'s limits, and {@code defaults} for each limit it leaves unset; none at all when the caller
     * configured {@link ResourceLimits#NONE} (or another empty value) on purpose.
     */
    static ResourceLimits withDefaults(ResourceLimits defaults, ResourceLimits configured) {
        if (configured == null) {
            return defaults;
        }
        if (configured.isEmpty()) {
            return ResourceLimits.NONE;
        }
        return new ResourceLimits(configured.cpuTime() != null ? configured.cpuTime() : defaults.cpuTime(),
                configured.memoryBytes() != null ? configured.memoryBytes() : defaults.memoryBytes(),
                configured.maxFileBytes() != null ? configured.maxFileBytes() : defaults.maxFileBytes(),
                configured.maxOpenFiles() != null ? configured.maxOpenFiles() : defaults.maxOpenFiles(),
                configured.maxProcesses() != null ? configured.maxProcesses() : defaults.maxProcesses());
    }

    /** The bounds of {@code defaults} this host cannot give a run, for the build-time message; empty when none. */
    static String unbounded(Set<ResourceLimit> enforced) {
        StringBuilder s = new StringBuilder();
        if (!enforced.contains(ResourceLimit.MEMORY)) {
            s.append("memory");
        }
        if (!enforced.contains(ResourceLimit.PROCESSES)) {
            s.append(s.length() == 0 ? "" : " and ").append("processes");
        }
        return s.toString();
    }

    static boolean kernelAtLeast(String version, int major, int minor) {
        try {
            String[] f = version.split("[.-]");
            int ma = Integer.parseInt(f[0]);
            int mi = f.length > 1 ? Integer.parseInt(f[1]) : 0;
            return ma > major || ma == major && mi >= minor;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A field of /proc/self/limits: column 1 soft, 2 hard (Long.MAX_VALUE for unlimited). */
    private static long limit(String name, int column) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith(name)) {
                    String[] f = line.substring(name.length()).trim().split("\\s+");
                    return f[column - 1].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(f[column - 1]);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // Unknown: treated as unlimited.
        }
        return Long.MAX_VALUE;
    }

    private static String run(String shell, String script) {
        try {
            Process p = new ProcessBuilder(shell, "-c", script).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return null;
            }
            return new String(out, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
