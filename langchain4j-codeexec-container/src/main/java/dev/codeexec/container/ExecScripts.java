package dev.codeexec.container;

import dev.codeexec.spi.RunListing;

/**
 * The few fixed shell scripts the engine runs inside a workspace container. Each is a constant passed as
 * {@code sh -c <script> sh <arguments...>}: every variable part (paths, ids, the program's argv and environment) is a
 * positional argument, never text spliced into a script, so no file name or model input can change what runs.
 *
 * <p>They need a POSIX {@code sh} and the basic file utilities ({@code mkdir}, {@code mkfifo}, {@code head -c}
 * reading no more than asked, {@code env}, {@code rm}, {@code mv}, {@code find}), as in any Debian, Ubuntu or Alpine
 * based image.
 */
final class ExecScripts {

    private ExecScripts() {
    }

    /**
     * PID 1 of a workspace container: sleeps and reaps every orphan (killed trees are re-parented to it). It installs
     * no signal handler, and the kernel delivers to a PID namespace's init only the signals it handles: no signal sent
     * from inside the container ({@code kill -TERM 1}, {@code kill -9 -1}) can end it. It also runs as another user
     * than the runs ({@link ContainerWorkspaces#INIT_USER}), so they may not even send one. The engine ends it from
     * outside (a forced removal).
     */
    static final String INIT = "while :; do sleep 3600 & wait $!; done";

    /**
     * Kills every process whose real group id is {@code $1}, except pid {@code $2} (may be empty): first stops them
     * all (a stopped process cannot fork, so a fork loop cannot outrun the kill), then kills them, repeating until
     * none is left. Uses only shell built-ins, so it still works when the pids limit is reached. Zombies are skipped:
     * PID 1 reaps them.
     */
    static final String KILL_GROUP_FUNCTION = ""
            + "killgroup() {\n"
            + "  for sig in STOP KILL; do\n"
            + "    i=0\n"
            + "    while [ $i -lt 200 ]; do\n"
            + "      found=\n"
            + "      for p in /proc/[0-9]*; do\n"
            + "        n=${p#/proc/}\n"
            + "        [ \"$n\" = \"$2\" ] && continue\n"
            + "        st=; g=\n"
            + "        { while read -r k a b; do\n"
            + "            case $k in State:) st=$a ;; Gid:) g=$a; break ;; esac\n"
            + "          done; } 2>/dev/null <\"$p/status\"\n"
            + "        [ \"$g\" = \"$1\" ] || continue\n"
            + "        case $st in Z) continue ;; T) [ $sig = STOP ] && continue ;; esac\n"
            + "        kill -s $sig \"$n\" 2>/dev/null && found=1\n"
            + "      done\n"
            + "      [ -z \"$found\" ] && break\n"
            + "      i=$((i+1))\n"
            + "    done\n"
            + "  done\n"
            + "}\n";

    /** {@code sh -c KILL_GROUP sh <gid>}: {@link #KILL_GROUP_FUNCTION} from a second exec. */
    static final String KILL_GROUP = KILL_GROUP_FUNCTION + "killgroup \"$1\" ''\n";

    /**
     * {@code sh -c SIGNAL sh <control dir> <gid> <signal>}: sends a signal to the run's program (its pid is in the
     * control directory), only while that pid still belongs to the run's group.
     */
    static final String SIGNAL = ""
            + "read -r p <\"$1/pid\" 2>/dev/null || exit 0\n"
            + "g=\n"
            + "{ while read -r k a b; do case $k in Gid:) g=$a; break ;; esac; done; } 2>/dev/null <\"/proc/$p/status\"\n"
            + "[ \"$g\" = \"$2\" ] && kill -s \"$3\" \"$p\" 2>/dev/null\n"
            + "exit 0\n";

    /**
     * The wrapper of every run: {@code sh -c RUN sh <control dir> <run dir> <gid> <cwd> <ulimits> <memory limit>
     * <nonce> <max entries> <max bytes> <folders> <workspace root> env -i NAME=value... <program> <args...>}; the
     * five listing arguments are {@code -} when the run lists nothing.
     *
     * <ul>
     *   <li>Stdin: docker-java cannot half-close an exec's stdin, so the channel sends it framed ({@code <length>\n}
     *       then the bytes; {@code 0\n} is end of file). A decoder turns the frames into a FIFO the program reads, so
     *       the program sees a real end of file.</li>
     *   <li>The program is a child whose pid goes to the control directory, so a signal reaches it and not this
     *       wrapper; its environment is exactly the launch's ({@code env -i}).</li>
     *   <li>Limits: {@code <ulimits>} is {@code "t n f"} (CPU seconds, open files, file size in 512-byte blocks, each
     *       {@code -} for none), applied to the program and what it starts.</li>
     *   <li>Memory: when the container's out-of-memory kill count rose during the run and the program was killed,
     *       a line on stderr says so (the exec's status is only 137; Docker does not flag an exec as OOM-killed).</li>
     *   <li>Afterwards every process left in the run's group (background children, {@code setsid} daemons) is killed,
     *       so none outlives the run and none holds its output open.</li>
     *   <li>Then, when asked, the folders are listed on stdout ({@link RunListing#FUNCTION}) from the workspace
     *       root, with the program's exit status, for the change report; nothing of the run can write any more.</li>
     * </ul>
     */
    static final String RUN = KILL_GROUP_FUNCTION + RunListing.FUNCTION
            + "oomkills() {\n"
            + "  ook=0\n"
            + "  for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do\n"
            + "    [ -r \"$f\" ] || continue\n"
            + "    while read -r k v; do [ \"$k\" = oom_kill ] && { ook=$v; return; }; done <\"$f\"\n"
            + "  done\n"
            + "}\n"
            + "c=$1; r=$2; g=$3; d=$4; lim=$5; mem=$6; ln=$7; lm=$8; lb=$9; shift 9; lf=$1; lr=$2; shift 2\n"
            // The run's folder is bookkeeping: a full workspace has no room for it, and must not stop the run (an rm)
            // that frees space. Its saved output is written by the engine, which may use the volume's reserve.
            + "mkdir -p -- \"$c\" \"$r\" 2>/dev/null; [ -d \"$c\" ] || exit 125\n"
            + "mkfifo -- \"$c/in\" || exit 125\n"
            + "cd -- \"$d\" || exit 126\n"
            + "set -f; set -- $lim \"$@\"; set +f\n"
            + "[ \"$1\" = - ] || ulimit -t \"$1\" || exit 125\n"
            + "[ \"$2\" = - ] || ulimit -n \"$2\" || exit 125\n"
            + "[ \"$3\" = - ] || ulimit -f \"$3\" || exit 125\n"
            + "shift 3\n"
            + "oomkills; before=$ook\n"
            + "exec 3<&0\n"
            + "( while IFS= read -r n && [ \"$n\" -gt 0 ] 2>/dev/null; do head -c \"$n\" || break; done"
            + " ) <&3 >\"$c/in\" 2>/dev/null &\n"
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
            + "killgroup \"$g\" \"$$\"\n"
            + "rm -rf -- \"$c\"\n"
            + "if [ \"$ln\" != - ] && cd -- \"$lr\"; then listfolders \"$rc\" \"$ln\" \"$lm\" \"$lb\" \"$lf\"; fi\n"
            + "exit \"$rc\"\n";
}
