package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on the pod's tree kill, in a {@link FakePod}: a PID namespace whose PID 1 is the engine's init, every
 * command entered from outside as the kubelet does (so a run's wrapper has {@code PPid} 0 there), all of it as the
 * pod's user and in a pids cgroup whose limit (read back first) is the pod's pids limit. Runs start as the engine
 * starts them ({@link PodScripts#runArgv}, the wrapper sent on stdin to {@link PodScripts#BOOT}); kills and signals
 * are the engine's second execs ({@link PodScripts#killArgv}, {@link PodScripts#signalArgv}). Every attack comes with
 * a positive control showing that what it checks can be seen failing: the escape happened before the kill.
 */
class PodScriptsAttackTest {

    private static final Path CGROUPS = Path.of("/sys/fs/cgroup/pids");
    private static final int PIDS = 64;

    /** A program's prefix: a {@code setsid} double-forked daemon, not holding the run's output; its pid to $1. */
    private static final String DAEMON = "setsid sh -c 'sleep 1000 & echo $! >\"$1\"' sh \"$1\" </dev/null >/dev/null"
            + " 2>&1 & while [ ! -s \"$1\" ]; do sleep 0.01; done\n";

    private FakePod pod;
    private Path cgroup;

    @BeforeAll
    static void requirements() {
        Requirements.require(FakePod.available(), "root with bwrap, nsenter and setpriv (the fake pod)");
        Requirements.require(Files.isWritable(CGROUPS), "a writable cgroup v1 pids hierarchy at " + CGROUPS
                + " (root)");
    }

    @BeforeEach
    void startPod() throws IOException {
        cgroup = Files.createDirectory(CGROUPS.resolve("codeexec-test-" + UUID.randomUUID()));
        Files.writeString(cgroup.resolve("pids.max"), Integer.toString(PIDS));
        assertThat(Files.readString(cgroup.resolve("pids.max")).trim()).isEqualTo(Integer.toString(PIDS));
        pod = FakePod.start("attack", PodLayout.DEFAULT_UID, PodLayout.DEFAULT_UID,
                List.of(PodLayout.VOLUME, PodLayout.TMP), cgroup);
    }

    @AfterEach
    void closePod() throws InterruptedException {
        if (pod != null) {
            pod.close();
        }
        for (int i = 0; i < 500 && cgroup != null; i++) {
            try {
                Files.deleteIfExists(cgroup);
                return;
            } catch (IOException e) {
                Thread.sleep(10); // its last processes are still being torn down
            }
        }
    }

    // --- a daemon left behind -----------------------------------------------------------------------------------

    @Test
    void should_kill_a_setsid_daemon_left_by_the_program_when_the_run_ends() throws Exception {
        for (PodScripts.Reaper reaper : PodScripts.Reaper.values()) {
            String c = control();
            Process run = startRun(reaper, c, "sh", "-c", DAEMON + "exit 3", "prog", "/tmp/daemon-" + reaper);
            assertThat(exit(run)).as(reaper.name()).isEqualTo(3);
            assertDies(pidIn("/tmp/daemon-" + reaper), reaper.name());
            assertThat(exists(c)).as(reaper.name()).isFalse();
        }
    }

    @Test
    void should_show_a_daemon_alive_when_no_run_ended_since_a_plain_exec_left_it() throws Exception {
        // Positive control of the check above: the same daemon, left by an exec that is not a run, stays alive.
        assertThat(sh(DAEMON + "exit 3", "/tmp/daemon").code()).isEqualTo(3);
        long d = pidIn("/tmp/daemon");
        assertThat(alive(d)).isTrue();
        assertThat(ppid(d)).isEqualTo(1);
        // ...until a run ends: what is under PID 1 besides the init's own sleep was left by someone.
        assertThat(exit(startRun(PodScripts.Reaper.PERL, control(), "true"))).isZero();
        assertDies(d, "the process");
    }

    @Test
    void should_kill_the_wrapper_and_a_setsid_daemon_when_the_kill_script_runs_during_the_program() throws Exception {
        for (PodScripts.Reaper reaper : List.of(PodScripts.Reaper.PYTHON, PodScripts.Reaper.NONE)) {
            String c = control();
            Process run = startRun(reaper, c, "sh", "-c", DAEMON + "exec sleep 1000", "prog", "/tmp/d-" + reaper);
            long d = pidIn("/tmp/d-" + reaper);
            awaitFile(c + "/pid");
            assertThat(kill(c, true)).isZero();
            assertThat(exit(run)).isEqualTo(137);
            assertDies(d, reaper.name());
            assertThat(exists(c)).as("the killed run's control folder").isFalse();
        }
    }

    // --- (a) the program kills its own wrapper --------------------------------------------------------------------

    @Test
    void should_kill_the_daemon_of_a_program_that_killed_its_wrapper_when_the_run_is_killed() throws Exception {
        for (PodScripts.Reaper reaper : PodScripts.Reaper.values()) {
            String c = control();
            long d = killOwnWrapper(reaper, c);
            assertThat(kill(c, false)).isZero(); // the engine's sweep after an exit of 137, or a later kill
            assertDies(d, reaper.name());
            assertThat(exists(c)).as("the dead wrapper's control folder").isFalse();
        }
    }

    @Test
    void should_kill_the_daemon_of_a_program_that_killed_its_wrapper_when_the_next_run_ends() throws Exception {
        long d = killOwnWrapper(PodScripts.Reaper.PERL, control());
        assertThat(exit(startRun(PodScripts.Reaper.PERL, control(), "true"))).isZero();
        assertDies(d, "the process");
    }

    /**
     * Runs a program that leaves a daemon and kills its wrapper ({@code kill -9 $PPID}); returns the daemon's pid once
     * the run's exec ended with 137 and the positive control held: the daemon is alive under PID 1, out of every
     * run's tree, and the wrapper's own end never ran.
     */
    private long killOwnWrapper(PodScripts.Reaper reaper, String c) throws Exception {
        String f = "/tmp/escaped-" + UUID.randomUUID();
        Process run = startRun(reaper, c, "sh", "-c", DAEMON + "kill -9 $PPID", "prog", f);
        assertThat(exit(run)).as(reaper.name()).isEqualTo(137);
        long d = pidIn(f);
        assertThat(alive(d)).as("positive control: the daemon escaped (" + reaper + ")").isTrue();
        assertThat(ppid(d)).isEqualTo(1);
        return d;
    }

    // --- (b) the program rewrites its control files ----------------------------------------------------------------

    @Test
    void should_kill_only_its_own_tree_and_signal_nothing_else_when_the_program_rewrote_its_control_files()
            throws Exception {
        String victim = control();
        Process b = startRun(PodScripts.Reaper.PYTHON, victim, "sleep", "1000");
        awaitFile(victim + "/pid");
        long bProgram = pidIn(victim + "/pid");
        long bWrapper = ppid(bProgram);
        String c = control();
        // The attacker names the other run's wrapper as its shell and the other run's program as its own.
        Process a = startRun(PodScripts.Reaper.PYTHON, c, "sh", "-c",
                "while [ ! -s \"$1/pid\" ]; do sleep 0.01; done; read -r me <\"$1/pid\"\n"
                        + "echo \"$2\" >\"$1/shell\"; echo \"$3\" >\"$1/pid\"; echo \"$me\" >/tmp/attacker; exec sleep 1000",
                "prog", c, Long.toString(bWrapper), Long.toString(bProgram));
        long aProgram = pidIn("/tmp/attacker");
        Await.until("the control files rewritten", () -> pidInQuietly(c + "/pid") == bProgram);

        assertThat(signal(c, "TERM")).isZero();
        assertThat(alive(bProgram)).as("the other run's program, signalled through the attacker's pid file").isTrue();

        assertThat(kill(c, true)).isZero(); // the attacker's timeout
        assertThat(exit(a)).isEqualTo(137);
        assertDies(aProgram, "the process");
        assertThat(alive(bWrapper)).as("the other run's wrapper").isTrue();
        assertThat(alive(bProgram)).as("the other run's program").isTrue();

        // Positive control: the other run was alive and reachable all along, and its own signal ends it.
        assertThat(signal(victim, "TERM")).isZero();
        assertThat(exit(b)).isEqualTo(143);
    }

    @Test
    void should_signal_the_program_only_while_it_is_a_child_of_the_run_wrapper() throws Exception {
        String c = control();
        Process run = startRun(PodScripts.Reaper.PERL, c, "sleep", "1000");
        awaitFile(c + "/pid");
        long program = pidIn(c + "/pid");
        assertThat(sh("sleep 1000 >/dev/null 2>&1 & echo $! >/tmp/stranger").code()).isZero();
        long stranger = pidIn("/tmp/stranger");
        write(c + "/pid", stranger + "\n");
        assertThat(signal(c, "KILL")).isZero();
        assertThat(alive(stranger)).as("a pid that is not the run's").isTrue();
        write(c + "/pid", program + "\n");
        assertThat(signal(c, "KILL")).isZero();
        assertThat(exit(run)).isEqualTo(137);
        assertDies(program, "the process");
    }

    // --- (c) decoys that fake the wrapper -----------------------------------------------------------------------

    @Test
    void should_never_take_a_decoy_with_the_wrapper_command_line_for_a_wrapper() throws Exception {
        String victim = control();
        Process b = startRun(PodScripts.Reaper.PERL, victim, "sleep", "1000");
        awaitFile(victim + "/pid");
        long bWrapper = ppid(pidIn(victim + "/pid"));
        // A decoy: BOOT's exact command line for the victim's folder, in a program's tree (not an exec's root).
        String decoyMark = "/tmp/decoy";
        Process a = startRun(PodScripts.Reaper.PERL, control(), "sh", "-c",
                "sleep 1000 | sh -c \"$1\" sh \"$2\" /codeexec/x raw / '- - -' 0 - - - - - env -i sleep 1000 &\n"
                        + "echo $! >\"$3\"; exec sleep 1000", "prog", PodScripts.BOOT, victim, decoyMark);
        long decoy = pidIn(decoyMark);
        Await.until("the decoy reads its script", () -> cmdline(decoy).startsWith("sh\0-c\0" + PodScripts.BOOT));
        // A run whose own arguments, which a model chooses, carry the victim's folder after BOOT's text.
        String otherControl = control();
        Process other = startRun(PodScripts.Reaper.PERL, otherControl, "sh", "-c", "exec sleep 1000", "prog",
                "\n" + PodScripts.BOOT_READ + "sh" + victim + "/x");
        long otherWrapper = ppid(pidIn(otherControl + "/pid"));

        assertThat(isWrapper(bWrapper, victim)).as("positive control: the real wrapper").isTrue();
        assertThat(isWrapper(decoy, victim)).as("a decoy in a program's tree").isFalse();
        assertThat(isWrapper(otherWrapper, victim)).as("a run naming the folder in its arguments").isFalse();

        assertThat(kill(victim, true)).isZero();
        assertThat(exit(b)).isEqualTo(137);
        assertThat(alive(decoy)).isTrue();
        assertThat(a.isAlive()).isTrue();
        assertThat(other.isAlive()).isTrue();
    }

    // --- the pids limit, the init, the kill's leftovers ---------------------------------------------------------

    @Test
    void should_stop_and_kill_a_fork_loop_that_filled_the_pids_limit() throws Exception {
        String c = control();
        assertThat(sh("mkfifo /tmp/go").code()).isZero();
        // The killer starts before the loop fills the pids limit: at the limit no new exec can start.
        Process killer = pod.start(List.of("sh", "-c", "read x </tmp/go\n" + PodScripts.KILL_TREE, "sh", c,
                PodScripts.KILL_MARK));
        // Every process forks forever and outlives a failed fork (a shell would exit on one).
        Process run = startRun(PodScripts.Reaper.PYTHON, c, "python3", "-c",
                "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass");
        Await.until("the pids limit reached", () -> pidsCurrent() >= PIDS);
        long start = System.nanoTime();
        try (OutputStream go = Files.newOutputStream(inPod("/tmp/go"))) {
            go.write("go\n".getBytes(StandardCharsets.US_ASCII));
        }
        assertThat(exit(killer)).isZero();
        System.out.printf("fork loop at %d pids killed in %d ms%n", PIDS,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        assertThat(exit(run)).isEqualTo(137);
        Await.until("every process of the loop gone (SIGKILL was sent to each)", () -> others().isEmpty());
    }

    @Test
    void should_leave_the_init_running_and_no_mark_behind_when_a_kill_comes_after_the_run_ended() throws Exception {
        String c = control();
        assertThat(exit(startRun(PodScripts.Reaper.PERL, c, "true"))).isZero();
        long start = System.nanoTime();
        assertThat(kill(c, false)).isZero();
        System.out.printf("a kill with nothing to kill took %d ms%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        assertThat(exists(c)).isFalse();
        // The sweep killed the init's sleep too: the init runs on and starts another.
        assertThat(pod.isAlive()).isTrue();
        Await.until("the init's next sleep", () -> initSleeps() == 1);
        assertThat(exit(startRun(PodScripts.Reaper.PERL, control(), "true"))).isZero();
    }

    @Test
    void should_stop_a_run_whose_exec_starts_after_the_kill_and_remove_its_mark() throws Exception {
        String c = control();
        assertThat(kill(c, true)).isZero();
        assertThat(exists(c + "/killed")).as("the mark a late wrapper checks").isTrue();
        assertThat(exit(startRun(PodScripts.Reaper.PERL, c, "sh", "-c", "echo ran >/tmp/ran"))).isEqualTo(137);
        assertThat(exists("/tmp/ran")).isFalse();
        assertThat(exists(c)).isFalse();
    }

    @Test
    void should_keep_the_kill_and_signal_command_lines_within_an_exec_url_of_4_kb() {
        // Names at their limits: a namespace of 63 characters, a pod of 253, an API server behind a long path.
        String master = "https://kubernetes.default.svc.cluster.local:6443/some/proxy/path/";
        String ns = "n".repeat(63);
        String podName = "p".repeat(253);
        String c = PodLayout.CONTROL + "/" + UUID.randomUUID();
        int kill = ExecSocket.uri(master, ns, podName, PodScripts.killArgv(c, true), false).toString().length();
        int signal = ExecSocket.uri(master, ns, podName, PodScripts.signalArgv(c, "TERM"), false).toString().length();
        System.out.printf("exec URL lengths: kill %d, signal %d%n", kill, signal);
        assertThat(kill).isLessThan(4096);
        assertThat(signal).isLessThan(4096);
    }

    // --- helpers ------------------------------------------------------------------------------------------------

    private static String control() {
        return PodLayout.CONTROL + "/" + UUID.randomUUID();
    }

    /** Starts a run as the engine does: the wrapper's argv, then the wrapper on stdin; the program's stdin is empty. */
    private Process startRun(PodScripts.Reaper reaper, String control, String... program) throws IOException {
        List<String> argv = PodScripts.runArgv(reaper, control, PodLayout.ROOT + "/.runs/" + UUID.randomUUID(), "/",
                "- - -", 0, null, Map.of("PATH", FakePod.PATH), List.of(program));
        Process p = pod.start(argv);
        p.getOutputStream().write(PodScripts.runPreamble());
        p.getOutputStream().close();
        return p;
    }

    private int kill(String control, boolean mark) throws IOException {
        return pod.exec(PodScripts.killArgv(control, mark), null, null, null);
    }

    private int signal(String control, String signal) throws IOException {
        return pod.exec(PodScripts.signalArgv(control, signal), null, null, null);
    }

    private boolean isWrapper(long pid, String control) throws IOException {
        return sh(PodScripts.FIND_WRAPPER_FUNCTION + "iswrapper \"$1\" \"$2\" && echo yes", Long.toString(pid),
                control).out().equals("yes\n");
    }

    private record Out(int code, String out) {
    }

    private Out sh(String script, String... args) throws IOException {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
        argv.addAll(List.of(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = pod.exec(argv, null, out, null);
        return new Out(code, out.toString(StandardCharsets.UTF_8));
    }

    private static int exit(Process p) throws InterruptedException {
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            FakePod.kill(p);
            throw new AssertionError("an exec did not end within 120 s");
        }
        return p.exitValue();
    }

    private Path inPod(String path) {
        return Path.of("/proc", Long.toString(pod.initPid()), "root", path.substring(1));
    }

    private boolean exists(String path) {
        return Files.exists(inPod(path));
    }

    private void write(String path, String text) throws IOException {
        Files.writeString(inPod(path), text);
    }

    private void awaitFile(String path) {
        Await.until(path, () -> pidInQuietly(path) > 0);
    }

    /** The pid a file in the pod holds, once it holds one. */
    private long pidIn(String path) {
        awaitFile(path);
        return pidInQuietly(path);
    }

    private long pidInQuietly(String path) {
        try {
            String s = Files.readString(inPod(path)).trim();
            return s.matches("\\d+") ? Long.parseLong(s) : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    /** A line of {@code /proc/<pid>/status} in the pod, or null when the process is gone. */
    private String status(long pid, String key) {
        try {
            for (String line : Files.readAllLines(inPod("/proc/" + pid + "/status"))) {
                if (line.startsWith(key + ":")) {
                    return line.substring(key.length() + 1).trim();
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    /**
     * Waits until a process the scripts killed is gone or a zombie: {@code kill} returns once SIGKILL is sent, and the
     * kernel ends the process after (the bound only ends a hung test: without the fix nothing ever kills it).
     */
    private void assertDies(long pid, String what) {
        Await.until(what + " (" + pid + ") dies", () -> !alive(pid));
    }

    private boolean alive(long pid) {
        String s = status(pid, "State");
        return s != null && !s.startsWith("Z");
    }

    private long ppid(long pid) {
        String s = status(pid, "PPid");
        return s == null ? -1 : Long.parseLong(s);
    }

    private String cmdline(long pid) {
        try {
            return Files.readString(inPod("/proc/" + pid + "/cmdline"), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }

    /** The pod's processes other than PID 1 and its init's sleep. */
    private List<Long> others() {
        try (Stream<Path> s = Files.list(inPod("/proc"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+")).map(Long::parseLong)
                    .filter(p -> p != 1 && alive(p) && !(ppid(p) == 1 && cmdline(p).equals("sleep\u00003600\u0000")))
                    .toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private long initSleeps() {
        try (Stream<Path> s = Files.list(inPod("/proc"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+")).map(Long::parseLong)
                    .filter(p -> ppid(p) == 1 && cmdline(p).equals("sleep\u00003600\u0000")).count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private long pidsCurrent() {
        try {
            return Long.parseLong(Files.readString(cgroup.resolve("pids.current")).trim());
        } catch (IOException e) {
            return -1;
        }
    }
}
