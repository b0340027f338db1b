package dev.codeexec.sandbox;

import java.util.ArrayList;
import java.util.List;

/**
 * The launching shell that sits between the JVM and bubblewrap. Java can only hand a child descriptors 0–2, but
 * bubblewrap reads its seccomp program and verified directory handles from further descriptors, and resource limits
 * must be in place before the sandbox starts. A POSIX shell does all of that and then {@code exec}s bubblewrap, so it
 * costs one {@code exec} and leaves no process behind.
 *
 * <p>In order: joins the run's cgroups (so every process of the run is counted), sets the CPU-time, file-size and
 * open-files rlimits (hard and soft), opens each protected directory with {@code cd -P} and checks that its physical
 * path is still the expected one (a link swapped in since the plan fails the run instead of redirecting a mount),
 * opens the seccomp program as descriptor 3, then runs bubblewrap. Every value reaches the script as a positional
 * parameter; nothing is spliced into shell text. A setup failure exits with {@value #SETUP_FAILED} and a line
 * starting with {@value #SETUP_PREFIX} on stderr.
 */
final class Launcher {

    static final int SETUP_FAILED = 125;
    static final String SETUP_PREFIX = "codeexec-sandbox-setup: ";

    static final String SCRIPT = String.join("\n",
            "fail() { echo \"" + SETUP_PREFIX + "$1\" >&2; exit " + SETUP_FAILED + "; }",
            "n=$1; shift",
            "while [ \"$n\" -gt 0 ]; do",
            "  echo $$ 2>/dev/null >\"$1\" || fail \"cannot join the run's cgroup\"",
            "  shift; n=$((n-1))",
            "done",
            "if [ -n \"$1\" ]; then ulimit -t \"$1\" || fail \"cannot set the CPU time limit\"; fi; shift",
            "if [ -n \"$1\" ]; then ulimit -f \"$1\" || fail \"cannot set the file size limit\"; fi; shift",
            "if [ -n \"$1\" ]; then ulimit -n \"$1\" || fail \"cannot set the open files limit\"; fi; shift",
            "n=$1; shift; fd=" + SandboxLayout.FIRST_PROTECTED_FD,
            "while [ \"$n\" -gt 0 ]; do",
            "  cd -P -- \"$1\" 2>/dev/null && [ \"$PWD\" = \"$1\" ] || fail \"a protected path changed during setup\"",
            "  eval \"exec $fd<.\" || fail \"cannot open a protected path\"",
            "  fd=$((fd+1)); shift; n=$((n-1))",
            "done",
            "if [ -n \"$1\" ]; then",
            "  [ -r \"$1\" ] || fail \"cannot read the seccomp program\"",
            "  exec 3<\"$1\"",
            "fi",
            "shift",
            "exec \"$@\"");

    private Launcher() {
    }

    /**
     * Inputs of the launcher.
     *
     * @param shell          absolute path of a POSIX shell
     * @param cgroupProcs    {@code cgroup.procs} files to join
     * @param cpuSeconds     RLIMIT_CPU in seconds, or null
     * @param fileBlocks     RLIMIT_FSIZE in 512-byte blocks, or null
     * @param openFiles      RLIMIT_NOFILE, or null
     * @param protectedDirs  directories to open as descriptors 4.., in order
     * @param seccompFile    the seccomp program to open as descriptor 3, or null
     * @param command        what to exec (bubblewrap and its argv)
     */
    record Spec(String shell, List<String> cgroupProcs, Long cpuSeconds, Long fileBlocks, Integer openFiles,
                List<String> protectedDirs, String seccompFile, List<String> command) {
        Spec {
            cgroupProcs = List.copyOf(cgroupProcs);
            protectedDirs = List.copyOf(protectedDirs);
            command = List.copyOf(command);
        }
    }

    static List<String> argv(Spec s) {
        List<String> a = new ArrayList<>();
        a.add(s.shell());
        a.add("-c");
        a.add(SCRIPT);
        a.add("codeexec-sandbox");
        a.add(Integer.toString(s.cgroupProcs().size()));
        a.addAll(s.cgroupProcs());
        a.add(s.cpuSeconds() == null ? "" : Long.toString(s.cpuSeconds()));
        a.add(s.fileBlocks() == null ? "" : Long.toString(s.fileBlocks()));
        a.add(s.openFiles() == null ? "" : Integer.toString(s.openFiles()));
        a.add(Integer.toString(s.protectedDirs().size()));
        a.addAll(s.protectedDirs());
        a.add(s.seccompFile() == null ? "" : s.seccompFile());
        a.addAll(s.command());
        return a;
    }
}
