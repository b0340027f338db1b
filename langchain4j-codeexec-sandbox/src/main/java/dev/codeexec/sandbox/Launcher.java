package dev.codeexec.sandbox;

import java.util.ArrayList;
import java.util.List;

/**
 * The launching shell that sits between the JVM and bubblewrap. Java can only hand a child descriptors 0–2, but
 * bubblewrap reads its seccomp program, verified directory handles and status channel from further descriptors, and
 * resource limits must be in place before the sandbox starts. A POSIX shell does all of that and then {@code exec}s
 * bubblewrap, so it costs one {@code exec} and leaves no process behind.
 *
 * <p>In order: opens the run's private status file as descriptor {@value #STATUS_FD}, joins the run's cgroups (so
 * every process of the run is counted), sets the CPU-time, file-size and open-files rlimits (hard and soft), opens
 * each pinned directory with {@code cd -P} and checks that its physical path is still the expected one (a link
 * swapped in since the plan fails the run instead of redirecting a mount), checks the directories bound by name the
 * same way (without keeping them open), opens the seccomp program as descriptor 3,
 * then runs bubblewrap. Every value reaches the script as a positional parameter; nothing is spliced into shell text.
 *
 * <p><b>Status, out of band.</b> What a program prints and its exit code are its own, so they never decide whether
 * the sandbox was set up. A setup failure of the launcher is a line {@value #FAILED} {@code <code> <reason>} in the
 * status file (and exit code {@value #SETUP_FAILED}); bubblewrap writes its {@code --json-status-fd} reports to the
 * same descriptor, whose {@code "exit-code"} document exists only when the program was really executed. When the
 * command is not bubblewrap (no sandbox, or Seatbelt), the launcher writes {@value #STARTED} just before the
 * {@code exec} and closes the descriptor, so the program cannot write to it. The status file lives in the engine's
 * private state directory, which no sandbox can see.
 */
final class Launcher {

    /** Exit code of the launching shell when it could not set up the run (not used to classify a run). */
    static final int SETUP_FAILED = 125;
    /** The descriptor of the status channel. */
    static final int STATUS_FD = 9;
    /** Status line prefix of a launcher setup failure: {@code setup-failed <code> <reason>}. */
    static final String FAILED = "setup-failed";
    /** Failure code: a path to be mounted changed between the plan and the launch. */
    static final String CHANGED = "changed";
    /** Status line written before the launcher executes a command that is not bubblewrap. */
    static final String STARTED = "started";

    static final String SCRIPT = String.join("\n",
            "if [ -n \"$1\" ]; then exec " + STATUS_FD + ">>\"$1\" || exit " + SETUP_FAILED + "; else exec "
                    + STATUS_FD + ">/dev/null; fi; shift",
            "fail() { printf '" + FAILED + " %s %s\\n' \"$1\" \"$2\" >&" + STATUS_FD + "; exit " + SETUP_FAILED
                    + "; }",
            "n=$1; shift",
            "while [ \"$n\" -gt 0 ]; do",
            "  echo 0 2>/dev/null >\"$1\" || fail cgroup \"cannot join the run's cgroup\"",
            "  shift; n=$((n-1))",
            "done",
            "if [ -n \"$1\" ]; then ulimit -t \"$1\" || fail limit \"cannot set the CPU time limit\"; fi; shift",
            "if [ -n \"$1\" ]; then ulimit -f \"$1\" || fail limit \"cannot set the file size limit\"; fi; shift",
            "if [ -n \"$1\" ]; then ulimit -n \"$1\" || fail limit \"cannot set the open files limit\"; fi; shift",
            "n=$1; shift; fd=" + SandboxLayout.FIRST_PINNED_FD,
            "while [ \"$n\" -gt 0 ]; do",
            "  cd -P -- \"$1\" 2>/dev/null && [ \"$PWD\" = \"$1\" ] || fail " + CHANGED
                    + " \"a path to be mounted changed during setup\"",
            "  eval \"exec $fd<.\" || fail open \"cannot open a path to be mounted\"",
            "  fd=$((fd+1)); shift; n=$((n-1))",
            "done",
            "n=$1; shift",
            "while [ \"$n\" -gt 0 ]; do",
            "  cd -P -- \"$1\" 2>/dev/null && [ \"$PWD\" = \"$1\" ] || fail " + CHANGED
                    + " \"a path to be mounted changed during setup\"",
            "  shift; n=$((n-1))",
            "done",
            "if [ -n \"$1\" ]; then",
            "  [ -r \"$1\" ] || fail seccomp \"cannot read the seccomp program\"",
            "  exec 3<\"$1\"",
            "fi",
            "shift",
            "if [ \"$1\" = " + STARTED + " ]; then printf '" + STARTED + "\\n' >&" + STATUS_FD + "; exec " + STATUS_FD
                    + ">&-; fi; shift",
            "exec \"$@\"");

    private Launcher() {
    }

    /**
     * Inputs of the launcher.
     *
     * @param shell         absolute path of a POSIX shell
     * @param statusFile    the run's private status file (appended to), or null to discard status (the preflight)
     * @param cgroupProcs   {@code cgroup.procs} files to join
     * @param cpuSeconds    RLIMIT_CPU in seconds, or null
     * @param fileBlocks    RLIMIT_FSIZE in 512-byte blocks, or null
     * @param openFiles     RLIMIT_NOFILE, or null
     * @param pinnedDirs    directories to open as descriptors 4.., in order (at most 5)
     * @param checkedDirs   directories bound by name that must still be these physical directories (not links)
     * @param seccompFile   the seccomp program to open as descriptor 3, or null
     * @param reportStarted true when {@code command} is not bubblewrap: write {@value #STARTED} before executing it
     *                      (bubblewrap reports on the status descriptor itself)
     * @param command       what to exec (bubblewrap and its argv)
     */
    record Spec(String shell, String statusFile, List<String> cgroupProcs, Long cpuSeconds, Long fileBlocks,
                Integer openFiles, List<String> pinnedDirs, List<String> checkedDirs, String seccompFile,
                boolean reportStarted, List<String> command) {
        Spec {
            cgroupProcs = List.copyOf(cgroupProcs);
            pinnedDirs = List.copyOf(pinnedDirs);
            if (pinnedDirs.size() > SandboxLayout.LAST_PINNED_FD - SandboxLayout.FIRST_PINNED_FD + 1) {
                throw new IllegalArgumentException("too many pinned directories: " + pinnedDirs.size());
            }
            checkedDirs = List.copyOf(checkedDirs);
            command = List.copyOf(command);
        }

        /** A launch without directories checked by name. */
        Spec(String shell, String statusFile, List<String> cgroupProcs, Long cpuSeconds, Long fileBlocks,
             Integer openFiles, List<String> pinnedDirs, String seccompFile, boolean reportStarted,
             List<String> command) {
            this(shell, statusFile, cgroupProcs, cpuSeconds, fileBlocks, openFiles, pinnedDirs, List.of(), seccompFile,
                    reportStarted, command);
        }
    }

    /**
     * The same launcher command line joining other control groups ({@code cgroup.procs} files; none for an empty
     * list): for a launch that is only shown or measured ({@link SandboxEngine#plannedLaunch}), whose own run groups
     * are released at once.
     */
    static List<String> withCgroups(List<String> argv, List<String> cgroupProcs) {
        if (argv.size() < 6 || !argv.get(2).equals(SCRIPT)) {
            return argv;
        }
        int n = Integer.parseInt(argv.get(5));
        List<String> a = new ArrayList<>(argv.subList(0, 5));
        a.add(Integer.toString(cgroupProcs.size()));
        a.addAll(cgroupProcs);
        a.addAll(argv.subList(6 + n, argv.size()));
        return a;
    }

    static List<String> argv(Spec s) {
        List<String> a = new ArrayList<>();
        a.add(s.shell());
        a.add("-c");
        a.add(SCRIPT);
        a.add("codeexec-sandbox");
        a.add(s.statusFile() == null ? "" : s.statusFile());
        a.add(Integer.toString(s.cgroupProcs().size()));
        a.addAll(s.cgroupProcs());
        a.add(s.cpuSeconds() == null ? "" : Long.toString(s.cpuSeconds()));
        a.add(s.fileBlocks() == null ? "" : Long.toString(s.fileBlocks()));
        a.add(s.openFiles() == null ? "" : Integer.toString(s.openFiles()));
        a.add(Integer.toString(s.pinnedDirs().size()));
        a.addAll(s.pinnedDirs());
        a.add(Integer.toString(s.checkedDirs().size()));
        a.addAll(s.checkedDirs());
        a.add(s.seccompFile() == null ? "" : s.seccompFile());
        a.add(s.reportStarted() ? STARTED : "");
        a.addAll(s.command());
        return a;
    }
}
