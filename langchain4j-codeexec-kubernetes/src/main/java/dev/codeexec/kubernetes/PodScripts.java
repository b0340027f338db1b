package dev.codeexec.kubernetes;

import dev.codeexec.spi.ContainerShell;
import dev.codeexec.spi.RunListing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The fixed shell scripts the Kubernetes backend runs in a workspace pod, and how a run's process tree is found there.
 *
 * <p>The container backend gives every run a group id of its own and kills by group. A Kubernetes exec cannot choose
 * its user or group, so here the run's wrapper shell is made a <em>child subreaper</em>
 * ({@code prctl(PR_SET_CHILD_SUBREAPER, 1)}, kept across {@code execve}) by a small launcher in front of it
 * ({@link Reaper}): every orphan of the run, a {@code setsid} double-forked daemon included, is re-parented to the
 * wrapper and stays its descendant. The tree is then the wrapper's descendants, found through the {@code PPid} links
 * of {@code /proc/<pid>/status} ({@link #KILL_TREE_FUNCTION}). Without a launcher (an image with neither
 * {@code python3} nor {@code perl}) a daemon that leaves the wrapper's tree escapes the kill; {@link #PROBE} tells the
 * engine which launcher a pod has, once per pod, so that it can say so.
 *
 * <p>Every script is a constant passed as {@code sh -c <script> sh <arguments...>}; nothing variable is spliced into
 * its text.
 */
final class PodScripts {

    private PodScripts() {
    }

    /** What makes a run's wrapper a child subreaper in a given image. */
    enum Reaper {
        /** {@code python3} with {@code ctypes}: calls {@code prctl} through libc, then execs the wrapper. */
        PYTHON("python3", "-c", "import ctypes,os,sys\n"
                + "if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0: sys.exit(125)\n"
                + "os.execvp(sys.argv[1], sys.argv[1:])\n"),
        /** {@code perl}: the raw {@code prctl} system call (x86-64 and arm64 numbers), then execs the wrapper. */
        PERL("perl", "-e", "use Config; my %n = ('x86_64' => 157, 'aarch64' => 167);"
                + " my ($a) = $Config{archname} =~ /^(x86_64|aarch64)/; defined $a or exit 125;"
                + " syscall($n{$a}, 36, 1, 0, 0, 0) == 0 or exit 125;"
                + " exec { $ARGV[0] } @ARGV or exit 127;"),
        /**
         * Neither: the wrapper is not a subreaper. The kill still finds every process that stays in the wrapper's
         * tree, but an orphan (a daemon that double-forked) is re-parented out of it and escapes.
         */
        NONE();

        private final List<String> launcher;

        Reaper(String... launcher) {
            this.launcher = List.of(launcher);
        }

        /** The argv in front of the wrapper's {@code sh}; empty for {@link #NONE}. */
        List<String> launcher() {
            return launcher;
        }
    }

    /**
     * {@code sh -c PROBE sh <python code> <perl code> <dir>...}: makes the directories (the workspace layout; exit
     * 125 when it cannot), then prints {@code perl}, {@code python} or {@code none}: the first {@link Reaper} that works
     * in this pod, tried for real (it must make a shell a subreaper and exec it). perl first: it starts in a few
     * milliseconds where python3 takes tens, and every run pays the launcher's start. One exec prepares a new pod.
     */
    static final String PROBE = ""
            + "p=$1; q=$2; shift 2\n"
            + "[ $# -eq 0 ] || mkdir -p -- \"$@\" || exit 125\n"
            + "if perl -e \"$q\" sh -c 'exit 0' >/dev/null 2>&1; then echo perl; "
            + "elif python3 -c \"$p\" sh -c 'exit 0' >/dev/null 2>&1; then echo python; "
            + "else echo none; fi\n";

    /** The probe's argv, making {@code dirs} first. */
    static List<String> probeArgv(List<String> dirs) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", PROBE, "sh", Reaper.PYTHON.launcher.get(2),
                Reaper.PERL.launcher.get(2)));
        argv.addAll(dirs);
        return argv;
    }

    /** The reaper a probe's output names. */
    static Reaper reaperOf(String probeOutput) {
        switch (probeOutput.trim()) {
            case "python":
                return Reaper.PYTHON;
            case "perl":
                return Reaper.PERL;
            default:
                return Reaper.NONE;
        }
    }

    /**
     * {@code killtree <root> <self>}: stops, then kills, every descendant of pid {@code <root>} (and kills
     * {@code <root>} itself unless it is {@code <self>}; the root, the run's wrapper, only waits, and is never stopped:
     * the exec's parent outside the pod, a runtime's {@code nsenter} for one, may stop itself when its child stops,
     * and would then never reap it): every pass first walks the whole tree from the {@code PPid} links of
     * {@code /proc/<pid>/status}, then signals it, the root last (a killed parent's children are re-parented, and
     * must be known before), so what forked meanwhile is found by the next pass; a stopped process cannot fork, so a
     * fork loop cannot outrun the stop, and the kill starts only when a whole pass stopped nothing new. Shell
     * built-ins only (no fork), so it still works at the pids limit. Zombies are skipped: their parent reaps them.
     */
    static final String KILL_TREE_FUNCTION = ""
            + "sigone() {\n"
            + "  st=\n"
            + "  { while read -r k a b; do case $k in State:) st=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"/proc/$1/status\"\n"
            + "  case $st in ''|Z) return ;; T) [ $sig = STOP ] && return ;; esac\n"
            + "  kill -s $sig \"$1\" 2>/dev/null && found=1\n"
            + "}\n"
            + "killtree() {\n"
            + "  for sig in STOP KILL; do\n"
            + "    i=0\n"
            + "    while [ $i -lt 200 ]; do\n"
            + "      tree=\" $1 \"; more=1\n"
            + "      while [ -n \"$more\" ]; do\n"
            + "        more=\n"
            + "        for p in /proc/[0-9]*; do\n"
            + "          n=${p#/proc/}\n"
            + "          case $tree in *\" $n \"*) continue ;; esac\n"
            + "          pp=\n"
            + "          { while read -r k a b; do case $k in PPid:) pp=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"$p/status\"\n"
            + "          case $tree in *\" $pp \"*) tree=\"$tree$n \"; more=1 ;; esac\n"
            + "        done\n"
            + "      done\n"
            + "      found=\n"
            + "      for n in $tree; do [ \"$n\" = \"$1\" ] || sigone \"$n\"; done\n"
            + "      [ \"$1\" = \"$2\" ] || [ $sig = STOP ] || sigone \"$1\"\n"
            + "      [ -z \"$found\" ] && break\n"
            + "      i=$((i+1))\n"
            + "    done\n"
            + "  done\n"
            + "}\n";

    /**
     * {@code iswrapper <pid> <control dir>} and {@code findwrapper <control dir>} (sets {@code $w}): a run's wrapper
     * is found by what it is, never read from a file a program of the run can rewrite.
     */
    static final String FIND_WRAPPER_FUNCTION = ""
            // A run's wrapper is the root of its exec (PPid 0: a process of the pod cannot give itself that parent)
            // started by BOOT for this run's control folder: its command line holds BOOT's mark and the folder. What
            // a program wrote into the control folder is never trusted. dash drops the NULs between arguments.
            + "iswrapper() {\n"
            + "  pp=\n"
            + "  { while read -r k a b; do case $k in PPid:) pp=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"/proc/$1/status\"\n"
            + "  [ \"$pp\" = 0 ] || return 1\n"
            + "  mk=; cd=\n"
            + "  { while IFS= read -r l || [ -n \"$l\" ]; do\n"
            + "      case $l in *\"" + RUN_MARK_FIRST + "\"\"" + RUN_MARK_REST + "\"*) mk=1 ;; esac\n"
            + "      case $l in *\"$2\"*) cd=1 ;; esac\n"
            + "    done; } 2>/dev/null <\"/proc/$1/cmdline\"\n"
            + "  [ -n \"$mk\" ] && [ -n \"$cd\" ]\n"
            + "}\n"
            // The wrapper of the run whose control folder is $1, or nothing: found by what it is, never by a file.
            + "findwrapper() {\n"
            + "  w=\n"
            + "  for p in /proc/[0-9]*; do\n"
            + "    n=${p#/proc/}\n"
            + "    [ \"$n\" = \"$$\" ] && continue\n"
            + "    iswrapper \"$n\" \"$1\" && { w=$n; return 0; }\n"
            + "  done\n"
            + "  return 1\n"
            + "}\n";

    /**
     * The mark in {@link #BOOT}'s text by which the kill and signal scripts know a run's wrapper, in two halves so
     * that no script that looks for it contains it whole.
     */
    static final String RUN_MARK_FIRST = "codeexec-";
    static final String RUN_MARK_REST = "run-wrapper";

    /**
     * The wrapper of every run: {@link ContainerShell#run} with the tree kill of this class. Arguments as there, the
     * third ({@code <tree>}) being the stdin mode: {@code raw} (protocol v5 ends stdin itself) or {@code framed}
     * (protocol v4: {@link ContainerShell#FRAMED_STDIN_DECODER}). The wrapper writes its own pid to
     * {@code <control dir>/shell} for the kill and signal scripts, then exits with 137 when a kill came first
     * ({@link #KILL_TREE}).
     */
    static final String RUN = ContainerShell.run(KILL_TREE_FUNCTION,
            "echo \"$$\" >\"$c/shell\" || exit 125\n[ -e \"$c/killed\" ] && exit 137\n",
            "{ if [ \"$g\" = framed ]; then " + ContainerShell.FRAMED_STDIN_DECODER + "; else cat; fi; }",
            "killtree \"$$\" \"$$\"; killtree 1 1");

    /** The stdin mode argument of {@link #RUN} for a protocol that can end stdin, and for one that cannot. */
    static final String STDIN_RAW = "raw";
    static final String STDIN_FRAMED = "framed";

    /**
     * What a run's exec starts: reads {@link #RUN} from the first frame of its stdin ({@code <length>\n} and the
     * script, {@link #runPreamble()}), then runs it with the exec's arguments. The wrapper is too long for the exec's
     * URL (about 5 KB encoded, where proxies in front of an API server and test servers limit a request line to 4 or 8
     * KB), and the stdin stream comes from the engine before the program exists, so the program cannot change it.
     * A script that did not arrive whole (the stream broke) is not run: the wrapper exits with 125 and nothing ran.
     * Needs a {@code head -c} that reads no more than asked, as the framed decoder does; {@link #RUN} is ASCII, so
     * its length in characters is its length in bytes.
     */
    static final String BOOT = ": " + RUN_MARK_FIRST + RUN_MARK_REST + "\n"
            + "IFS= read -r n && s=$(head -c \"$n\"; echo .) && s=${s%.} && [ \"${#s}\" = \"$n\" ]"
            + " && eval \"$s\" || exit 125";

    /** The first bytes of a run's stdin, before the program's: {@link #RUN} as one frame, read by {@link #BOOT}. */
    static byte[] runPreamble() {
        byte[] run = RUN.getBytes(StandardCharsets.UTF_8);
        byte[] head = (run.length + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[head.length + run.length];
        System.arraycopy(head, 0, b, 0, head.length);
        System.arraycopy(run, 0, b, head.length, run.length);
        return b;
    }

    /**
     * {@code sh -c KILL_TREE sh <control dir>}: kills the run's wrapper (its pid is in the control directory) and its
     * whole tree, from a second exec. A kill that comes before the wrapper wrote its pid leaves a {@code killed}
     * mark first, which the wrapper checks after writing its pid: either the wrapper sees the mark and exits, or this
     * script sees the pid.
     */
    static final String KILL_TREE = KILL_TREE_FUNCTION + FIND_WRAPPER_FUNCTION
            // Built-ins first: at the pids limit the directory exists (the run is under way) and no mkdir is needed.
            + "[ -d \"$1\" ] || mkdir -p -- \"$1\" 2>/dev/null; : >\"$1/killed\" 2>/dev/null\n"
            + "findwrapper \"$1\" && killtree \"$w\" \"$$\"\n"
            // Orphans under PID 1 are what a run left when its wrapper was killed from inside (a live wrapper is its
            // run's subreaper, so none of a live run's processes is there): they go too.
            + "killtree 1 1\n"
            + "exit 0\n";

    /**
     * {@code sh -c SIGNAL sh <control dir> <signal>}: sends a signal to the run's program (its pid is in the control
     * directory), only while that pid is still a descendant of the run's wrapper: a pid the kernel gave to another
     * process since is not signalled.
     */
    static final String SIGNAL = FIND_WRAPPER_FUNCTION
            + "read -r p <\"$1/pid\" 2>/dev/null || exit 0\n"
            + "findwrapper \"$1\" || exit 0\n"
            + "x=$p; i=0\n"
            + "while [ $i -lt 64 ] && [ -n \"$x\" ] && [ \"$x\" != 0 ] && [ \"$x\" != 1 ]; do\n"
            + "  pp=\n"
            + "  { while read -r k a b; do case $k in PPid:) pp=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"/proc/$x/status\"\n"
            + "  if [ \"$pp\" = \"$w\" ]; then kill -s \"$2\" \"$p\" 2>/dev/null; exit 0; fi\n"
            + "  x=$pp; i=$((i+1))\n"
            + "done\n"
            + "exit 0\n";

    /**
     * The argv of a run: the reaper's launcher, then {@code sh -c BOOT sh} and {@code wrapperArgs} ({@link #RUN}'s
     * arguments; {@link PodExecChannel} sets the stdin mode, the third, for the protocol it speaks). The exec's stdin
     * starts with {@link #runPreamble()}.
     */
    static List<String> runArgv(Reaper reaper, List<String> wrapperArgs) {
        List<String> argv = new ArrayList<>(reaper.launcher());
        argv.addAll(List.of("sh", "-c", BOOT, "sh"));
        argv.addAll(wrapperArgs);
        return argv;
    }

    /**
     * The argv of a run, from its parts, in {@link ContainerShell#run}'s order.
     *
     * @param reaper      the pod's launcher ({@link PodExec#probeReaper})
     * @param controlDir  the run's control folder, under {@link PodLayout#CONTROL}
     * @param runDir      the run's folder in the pod (absolute)
     * @param cwd         the program's working directory in the pod
     * @param ulimits     {@code "t n f"}: CPU seconds, open files, file size in 512-byte blocks, each {@code -} for none
     * @param memoryBytes the memory limit named in the out-of-memory note
     * @param listing     the folders listed after the program, or null
     * @param environment the program's whole environment
     * @param command     the program and its arguments
     */
    static List<String> runArgv(Reaper reaper, String controlDir, String runDir, String cwd, String ulimits,
                                long memoryBytes, RunListing listing, Map<String, String> environment,
                                List<String> command) {
        List<String> a = new ArrayList<>(List.of(controlDir, runDir, STDIN_RAW, cwd, ulimits,
                Long.toString(memoryBytes)));
        if (listing == null) {
            a.addAll(List.of("-", "-", "-", "-", "-"));
        } else {
            a.addAll(listing.arguments());
            a.add(PodLayout.ROOT);
        }
        a.addAll(List.of("env", "-i"));
        environment.forEach((k, v) -> a.add(k + "=" + v));
        a.addAll(command);
        return runArgv(reaper, a);
    }
}
