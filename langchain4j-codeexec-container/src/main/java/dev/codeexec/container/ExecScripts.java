package dev.codeexec.container;

import dev.codeexec.spi.ContainerShell;

/**
 * The few fixed shell scripts the engine runs inside a workspace container. Each is a constant passed as
 * {@code sh -c <script> sh <arguments...>}: every variable part (paths, ids, the program's argv and environment) is a
 * positional argument, never text spliced into a script, so no file name or model input can change what runs.
 *
 * <p>They need a POSIX {@code sh} and the basic file utilities ({@code mkdir}, {@code mkfifo}, {@code head -c}
 * reading no more than asked, {@code env}, {@code rm}, {@code mv}, {@code find}), as in any Debian, Ubuntu or Alpine
 * based image. What the Kubernetes backend's pods run as well (PID 1's loop, the wrapper's body) is
 * {@link ContainerShell}'s; the tree kill by group id is this backend's own.
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
    static final String INIT = ContainerShell.INIT;

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
     * The wrapper of every run ({@link ContainerShell#run}): {@code sh -c RUN sh <control dir> <run dir> <gid> <cwd>
     * <ulimits> <memory limit> <nonce> <max entries> <max bytes> <folders> <workspace root> env -i NAME=value...
     * <program> <args...>}; the five listing arguments are {@code -} when the run lists nothing.
     *
     * <ul>
     *   <li>Stdin: docker-java cannot half-close an exec's stdin, so the channel sends it framed
     *       ({@link ContainerShell#FRAMED_STDIN_DECODER}).</li>
     *   <li>The tree: every process of the run carries the run's group id {@code <gid>}; afterwards every process
     *       left in that group (background children, {@code setsid} daemons) is killed.</li>
     * </ul>
     */
    static final String RUN = ContainerShell.run(KILL_GROUP_FUNCTION, "", ContainerShell.FRAMED_STDIN_DECODER,
            "killgroup \"$g\" \"$$\"");

    /**
     * {@link #RUN} for a long-lived program whose stdin is raw ({@link FramedStdin#raw()}): one {@code cat} copies it
     * to the program, so no process is started per write (the program's input keeps flowing at the pids limit); the
     * program never sees an end of file from the engine.
     */
    static final String RUN_RAW_STDIN = ContainerShell.run(KILL_GROUP_FUNCTION, "", "cat",
            "killgroup \"$g\" \"$$\"");
}
