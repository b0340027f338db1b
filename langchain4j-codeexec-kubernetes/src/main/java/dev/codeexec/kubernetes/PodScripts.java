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
 * {@code python3} nor {@code perl}) a daemon that leaves the wrapper's tree runs under PID 1 until the run ends or is
 * killed; {@link #PROBE} tells the engine which launcher a pod has, once per pod, so that it can say so.
 *
 * <p>Every process of the pod has the same user, so a program can kill its own wrapper and write anything into its
 * control folder. Nothing a program can write is trusted: the kill and signal scripts find the wrapper by what it is
 * ({@link #FIND_WRAPPER_FUNCTION}), and the orphans a dead wrapper left under PID 1 are killed by every kill and every
 * run's end ({@code killorphans}).
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
     * fork loop cannot outrun the stop, and the kill starts only when a whole pass stopped nothing new; kill passes
     * repeat while one killed a stopped process (what is not stopped then was born or continued since: it is killed
     * when seen, but does not keep the loop going, so the sweep under PID 1 does not chase the init's next
     * {@code sleep}). Shell built-ins only (no fork), so it still works at the pids limit. Zombies are skipped: their
     * parent reaps them.
     *
     * <p>{@code killorphans}: {@code killtree 1 1} when PID 1 is the engine's {@link ContainerShell#INIT}.
     */
    static final String KILL_TREE_FUNCTION = ""
            + "sigone() {\n"
            + "  st=\n"
            + "  { while read -r k a b; do case $k in State:) st=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"/proc/$1/status\"\n"
            + "  case $st in ''|Z) return ;; T) [ $sig = STOP ] && return ;; *) [ $sig = KILL ] && ns=1 ;; esac\n"
            + "  kill -s $sig \"$1\" 2>/dev/null && [ -z \"$ns\" ] && found=1\n"
            + "  ns=\n"
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
            + "}\n"
            // Orphans: a live wrapper is its run's subreaper, so what is under PID 1 besides INIT's own sleep was
            // left by a run whose wrapper died (killed from inside) or had no launcher. Only under the engine's INIT:
            // under another PID 1 (a pod sharing its process namespace) its children are not the run's.
            + "killorphans() {\n"
            + "  l=\n"
            + "  { IFS= read -r l; } 2>/dev/null </proc/1/cmdline\n"
            + "  [ \"$l\" = 'sh-c" + ContainerShell.INIT + "' ] && killtree 1 1\n"
            + "}\n";

    /** The mark on {@link #BOOT}'s first line by which the kill and signal scripts know a run's wrapper, in halves. */
    static final String RUN_MARK_FIRST = "codeexec-";
    static final String RUN_MARK_REST = "run-wrapper";

    /**
     * {@link #BOOT} after its mark: reads {@link #RUN} from stdin and runs it. Has no single quote: the kill script
     * quotes it whole.
     */
    static final String BOOT_READ = "IFS= read -r n && s=$(head -c \"$n\"; echo .) && s=${s%.} && [ \"${#s}\" = \"$n\" ]"
            + " && eval \"$s\" || exit 125";

    /**
     * {@code iswrapper <pid> <control dir>} and {@code findwrapper <control dir>} (sets {@code $w}): a run's wrapper
     * is found by what it is, never read from a file a program of the run can rewrite. It is the root of an exec
     * ({@code PPid} 0: its parent, the runtime, is outside the pod's PID namespace, and no process of the pod can give
     * itself that parent) whose command line is {@link #BOOT}'s with this control folder in its place: the first line
     * of {@code /proc/<pid>/cmdline} (the shell's {@code read} drops the NULs between arguments) is exactly
     * {@code sh -c} and {@link #BOOT}'s mark, the second starts with the rest of {@link #BOOT}, {@code sh}, the
     * folder and the run folder's leading slash. Arguments further on (a program's, which a model chooses) cannot
     * make the first two lines: they come after them.
     */
    static final String FIND_WRAPPER_FUNCTION = ""
            + "iswrapper() {\n"
            + "  pp=\n"
            + "  { while read -r k a b; do case $k in PPid:) pp=$a; break ;; esac; done; } 2>/dev/null"
            + " <\"/proc/$1/status\"\n"
            + "  [ \"$pp\" = 0 ] || return 1\n"
            + "  l1=; l2=\n"
            // The second line may be the last, with no newline: read then fails, having read it.
            + "  { IFS= read -r l1; IFS= read -r l2; } 2>/dev/null <\"/proc/$1/cmdline\"\n"
            // The mark in two halves, so that this script, in a kill's own command line, never reads as one.
            + "  [ \"$l1\" = 'sh-c: " + RUN_MARK_FIRST + "''" + RUN_MARK_REST + "' ] || return 1\n"
            + "  case $l2 in '" + BOOT_READ + "sh'\"$2\"/*) return 0 ;; esac\n"
            + "  return 1\n"
            + "}\n"
            + "findwrapper() {\n"
            + "  w=\n"
            + "  for wp in /proc/[0-9]*; do\n"
            + "    wn=${wp#/proc/}\n"
            + "    [ \"$wn\" = \"$$\" ] && continue\n"
            + "    iswrapper \"$wn\" \"$1\" && { w=$wn; return 0; }\n"
            + "  done\n"
            + "  return 1\n"
            + "}\n";

    /**
     * The wrapper of every run: {@link ContainerShell#run} with the tree kill of this class. Arguments as there, the
     * third ({@code <tree>}) being the stdin mode: {@code raw} (protocol v5 ends stdin itself) or {@code framed}
     * (protocol v4: {@link ContainerShell#FRAMED_STDIN_DECODER}). The wrapper exits with 137 when a kill came first
     * ({@link #KILL_TREE}'s mark), and at its end kills what the run left: its own tree, and the orphans under PID 1.
     */
    static final String RUN = ContainerShell.run(KILL_TREE_FUNCTION,
            "[ -e \"$c/killed\" ] && { rm -rf -- \"$c\"; exit 137; }\n",
            "{ if [ \"$g\" = framed ]; then " + ContainerShell.FRAMED_STDIN_DECODER + "; else cat; fi; }",
            "killtree \"$$\" \"$$\"; killorphans");

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
    static final String BOOT = ": " + RUN_MARK_FIRST + RUN_MARK_REST + "\n" + BOOT_READ;

    /** The first bytes of a run's stdin, before the program's: {@link #RUN} as one frame, read by {@link #BOOT}. */
    static byte[] runPreamble() {
        return frame(RUN.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A script as one frame of stdin, as {@link #BOOT} and the relay's launcher read it: its length in decimal and a
     * newline, then its bytes.
     */
    static byte[] frame(byte[] script) {
        byte[] head = (script.length + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[head.length + script.length];
        System.arraycopy(head, 0, b, 0, head.length);
        System.arraycopy(script, 0, b, head.length, script.length);
        return b;
    }

    /**
     * {@code sh -c KILL_TREE sh <control dir> [mark]}: kills the run's wrapper ({@link #FIND_WRAPPER_FUNCTION}) and
     * its whole tree, then the orphans under PID 1 ({@code killorphans}: what a run left when its wrapper died), from
     * a second exec, and removes the control folder of the wrapper it killed. With {@code mark} (the run's exit is not
     * known: its exec may not have started the wrapper yet) it first leaves a {@code killed} mark, which the wrapper
     * checks once it runs: either the wrapper sees the mark, removes its folder and exits with 137, or it already ran
     * when this script looked, and is found. Without, it leaves nothing behind: a kill after the run ended only sweeps.
     */
    static final String KILL_TREE = compact(KILL_TREE_FUNCTION + FIND_WRAPPER_FUNCTION
            // Built-ins first: at the pids limit the directory exists (the run is under way) and no mkdir is needed.
            + "if [ \"$2\" = mark ]; then\n"
            + "  [ -d \"$1\" ] || mkdir -p -- \"$1\" 2>/dev/null; : >\"$1/killed\" 2>/dev/null\n"
            + "fi\n"
            + "if findwrapper \"$1\"; then\n"
            + "  killtree \"$w\" \"$$\"; killorphans; rm -rf -- \"$1\" 2>/dev/null\n"
            + "else\n"
            // No wrapper: the run ended, or its wrapper died (killed from inside: the program had started, and
            // its folder stayed), or its exec has not started it yet (the folder has no pid, and keeps the mark).
            + "  killorphans; [ -e \"$1/pid\" ] && rm -rf -- \"$1\" 2>/dev/null\n"
            + "fi\n"
            + "exit 0\n");

    /** {@link #KILL_TREE}'s second argument when the run's exit is not known. */
    static final String KILL_MARK = "mark";

    /** The argv of {@link #KILL_TREE} for the run whose control folder is {@code controlDir}. */
    static List<String> killArgv(String controlDir, boolean mark) {
        return mark ? List.of("sh", "-c", KILL_TREE, "sh", controlDir, KILL_MARK)
                : List.of("sh", "-c", KILL_TREE, "sh", controlDir);
    }

    /** The argv of {@link #SIGNAL} ({@code INT}, {@code TERM}, ...) for the run of {@code controlDir}. */
    static List<String> signalArgv(String controlDir, String signal) {
        return List.of("sh", "-c", SIGNAL, "sh", controlDir, signal);
    }

    /**
     * {@code sh -c SIGNAL sh <control dir> <signal>}: sends a signal to the run's program (its pid is in the control
     * directory), only while that pid is still a descendant of the run's wrapper, which is found by what it is
     * ({@link #FIND_WRAPPER_FUNCTION}): a pid the kernel gave to another process since, or one a program wrote there,
     * is signalled only if it is of the run's own tree.
     */
    static final String SIGNAL = compact(FIND_WRAPPER_FUNCTION
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
            + "exit 0\n");

    /**
     * {@code script} without the indentation of its lines, which none of these scripts needs: a script that travels
     * in an exec's URL ({@link #KILL_TREE}, {@link #SIGNAL}) costs three bytes there for every space.
     */
    private static String compact(String script) {
        return script.replaceAll("(?m)^[ ]+", "");
    }

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
