package dev.codeexec.spi;

import dev.codeexec.engine.ResourceLimits;

/**
 * The shell scripts a backend runs inside a Linux container it reaches only through exec calls (a Docker container,
 * a Kubernetes pod): PID 1's reaping loop, the framed-stdin decoder, and the wrapper of every run, with the one part
 * that differs between backends (how the run's process tree is found and killed) as a parameter. One copy, so that a
 * fix to the wrapper reaches every backend.
 *
 * <p>Each script is passed as {@code sh -c <script> sh <arguments...>}: every variable part (paths, ids, the
 * program's argv and environment) is a positional argument, never text spliced into a script, so no file name or
 * model input can change what runs. They need a POSIX {@code sh} and the basic file utilities ({@code mkdir},
 * {@code mkfifo}, {@code head -c} reading no more than asked, {@code env}, {@code rm}, {@code find}), as in any Debian,
 * Ubuntu or Alpine based image.
 */
public final class ContainerShell {

    private ContainerShell() {
    }

    /**
     * PID 1 of a workspace container: sleeps and reaps every orphan (killed trees are re-parented to it). It installs
     * no signal handler, and the kernel delivers to a PID namespace's init only the signals it handles: no signal sent
     * from inside the container ({@code kill -TERM 1}, {@code kill -9 -1}) can end it.
     */
    public static final String INIT = "while :; do sleep 3600 & wait $!; done";

    /**
     * A subshell that turns framed input ({@code <length>\n} then the bytes; {@code 0\n} is end of file) on its stdin
     * into the raw bytes on its stdout, and ends at {@code 0\n}: the end of file of a transport that cannot
     * half-close its stream.
     */
    public static final String FRAMED_STDIN_DECODER =
            "( while IFS= read -r n && [ \"$n\" -gt 0 ] 2>/dev/null; do head -c \"$n\" || break; done )";

    /** {@code oomkills}: sets {@code $ook} to the container's out-of-memory kill count (cgroup v2 or v1), or 0. */
    public static final String OOM_KILLS_FUNCTION = ""
            + "oomkills() {\n"
            + "  ook=0\n"
            + "  for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do\n"
            + "    [ -r \"$f\" ] || continue\n"
            + "    while read -r k v; do [ \"$k\" = oom_kill ] && { ook=$v; return; }; done <\"$f\"\n"
            + "  done\n"
            + "}\n";

    /**
     * The wrapper of every run: {@code sh -c <script> sh <control dir> <run dir> <tree> <cwd> <ulimits> <memory
     * limit> <nonce> <max entries> <max bytes> <folders> <workspace root> env -i NAME=value... <program> <args...>};
     * the five listing arguments are {@code -} when the run lists nothing; {@code <tree>} is the backend's own
     * argument, {@code $g} to the parts below.
     *
     * <ul>
     *   <li>Stdin: {@code stdinPump} copies the exec's stdin (fd 3 while it runs) to a FIFO the program reads, so the
     *       program sees a real end of file ({@link #FRAMED_STDIN_DECODER} for a transport that cannot half-close).
     *   </li>
     *   <li>The program is a child whose pid goes to {@code <control dir>/pid}, so a signal reaches it and not this
     *       wrapper; its environment is exactly the launch's ({@code env -i}).</li>
     *   <li>Limits: {@code <ulimits>} is {@code "t n f"} (CPU seconds, open files, file size in 512-byte blocks, each
     *       {@code -} for none), applied to the program and what it starts.</li>
     *   <li>Memory: when the container's out-of-memory kill count rose during the run and the program was killed,
     *       a line on stderr says so (an exec's status is only 137).</li>
     *   <li>Afterwards {@code killLeftovers} kills every process the run left behind (background children,
     *       {@code setsid} daemons), so none outlives the run and none holds its output open.</li>
     *   <li>Then, when asked, the folders are listed on stdout ({@link RunListing#FUNCTION}) from the workspace
     *       root, with the program's exit status, for the change report; nothing of the run can write any more.</li>
     * </ul>
     *
     * @param treeKillFunction shell functions the other parts call (the backend's tree kill)
     * @param beforeProgram    commands run after the control directory exists and before the limits apply (empty
     *                         for none)
     * @param stdinPump        a command copying its stdin to its stdout until end of file
     * @param killLeftovers    the command that kills what the run left, except this shell ({@code $$})
     */
    public static String run(String treeKillFunction, String beforeProgram, String stdinPump, String killLeftovers) {
        return treeKillFunction + RunListing.FUNCTION + OOM_KILLS_FUNCTION
                + "c=$1; r=$2; g=$3; d=$4; lim=$5; mem=$6; ln=$7; lm=$8; lb=$9; shift 9; lf=$1; lr=$2; shift 2\n"
                // The run's folder is bookkeeping: a full workspace has no room for it, and must not stop the run
                // (an rm) that frees space. Its saved output is written by the engine, which may use a reserve.
                + "mkdir -p -- \"$c\" \"$r\" 2>/dev/null; [ -d \"$c\" ] || exit 125\n"
                + "mkfifo -- \"$c/in\" || exit 125\n"
                + beforeProgram
                + "cd -- \"$d\" || exit 126\n"
                + "set -f; set -- $lim \"$@\"; set +f\n"
                + "[ \"$1\" = - ] || ulimit -t \"$1\" || exit 125\n"
                + "[ \"$2\" = - ] || ulimit -n \"$2\" || exit 125\n"
                + "[ \"$3\" = - ] || ulimit -f \"$3\" || exit 125\n"
                + "shift 3\n"
                + "oomkills; before=$ook\n"
                + "exec 3<&0\n"
                + stdinPump + " <&3 >\"$c/in\" 2>/dev/null &\n"
                + "\"$@\" <\"$c/in\" 3<&- &\n"
                + "p=$!\n"
                + "echo \"$p\" >\"$c/pid\"\n"
                + "exec 3<&-\n"
                + "wait \"$p\"; rc=$?\n"
                + "if [ \"$rc\" -ge 128 ]; then\n"
                + "  oomkills\n"
                + "  [ \"$ook\" != \"$before\" ] &&"
                + " echo \"[codeexec] killed: out of memory (the workspace's memory limit is $mem bytes)\" >&2\n"
                + "fi\n"
                + killLeftovers + "\n"
                + "rm -rf -- \"$c\"\n"
                + "if [ \"$ln\" != - ] && cd -- \"$lr\"; then listfolders \"$rc\" \"$ln\" \"$lm\" \"$lb\" \"$lf\"; fi\n"
                + "exit \"$rc\"\n";
    }

    /**
     * The wrapper's {@code <ulimits>} argument for {@code limits}: CPU seconds (rounded up), open files and file size
     * in 512-byte blocks (rounded up), each {@code -} for none.
     */
    public static String ulimits(ResourceLimits limits) {
        String t = limits.cpuTime() == null ? "-"
                : Long.toString(Math.max(1, (limits.cpuTime().toMillis() + 999) / 1000));
        String n = limits.maxOpenFiles() == null ? "-" : Integer.toString(limits.maxOpenFiles());
        String f = limits.maxFileBytes() == null ? "-"
                : Long.toString(Math.max(1, (limits.maxFileBytes() + 511) / 512));
        return t + " " + n + " " + f;
    }

    /**
     * {@code sh -c DELETE sh <path>}: deletes {@code <path>} without following links, making read-only directories
     * inside it writable first (a program may have left them so), so that a delete never half-succeeds.
     */
    public static final String DELETE = ""
            + "if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then\n"
            + "  find \"$1\" -type d ! -perm -u+w -exec chmod u+w {} + 2>/dev/null\n"
            + "fi\n"
            + "rm -rf -- \"$1\"\n";

    /**
     * {@code sh -c REPLACE sh <staged> <target>}: replaces {@code <target>} by its sibling {@code <staged>}: deletes
     * what was at the target ({@link #DELETE}), then renames without following a link at the target.
     */
    public static final String REPLACE = DELETE.replace("$1", "$2") + "mv -f -T -- \"$1\" \"$2\"\n";
}
