package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Attacks on the pod's tree kill, with the pod scripts run by {@code sh} on this host: each attack runs as PID 1 of a
 * PID namespace of its own ({@code unshare --pid --fork --mount-proc --kill-child}, so nothing it starts outlives it)
 * inside a pids cgroup whose limit is read back first. Each attack is paired with a positive control that shows the
 * test can fail: the same daemon without the subreaper launcher escapes.
 */
class PodScriptsAttackTest {

    private static final Path CGROUPS = Path.of("/sys/fs/cgroup/pids");
    private static final int PIDS = 64;

    @BeforeAll
    static void requirements() {
        Requirements.requireCommand("unshare");
        Requirements.requireCommand("setsid");
        Requirements.require(Files.isWritable(CGROUPS), "a writable cgroup v1 pids hierarchy at " + CGROUPS
                + " (root)");
    }

    @Test
    void should_kill_a_setsid_daemon_left_by_the_program_when_the_wrapper_is_a_subreaper() throws Exception {
        for (String reaper : List.of("python", "perl")) {
            Map<String, String> r = attack("daemon-leftover", reaper);
            assertThat(r).as(reaper).containsEntry("wrapper", "3").containsEntry("daemon", "dead");
        }
    }

    @Test
    void should_show_the_daemon_escaping_when_the_wrapper_is_no_subreaper() throws Exception {
        // Positive control: the same attack without the launcher. The orphan is re-parented to PID 1, out of the tree.
        Map<String, String> r = attack("daemon-leftover", "none");
        assertThat(r).containsEntry("wrapper", "3").containsEntry("daemon", "alive");
    }

    @Test
    void should_kill_the_wrapper_and_a_setsid_daemon_when_the_kill_script_runs_during_the_program() throws Exception {
        Map<String, String> r = attack("daemon-kill", "python");
        assertThat(r).containsEntry("kill", "0").containsEntry("wrapper", "137").containsEntry("daemon", "dead");
    }

    @Test
    void should_show_the_daemon_escaping_the_kill_script_when_the_wrapper_is_no_subreaper() throws Exception {
        Map<String, String> r = attack("daemon-kill", "none");
        assertThat(r).containsEntry("kill", "0").containsEntry("daemon", "alive");
    }

    @Test
    void should_stop_and_kill_a_fork_loop_that_filled_the_pids_limit() throws Exception {
        Map<String, String> r = attack("forkloop", "python");
        assertThat(r).containsEntry("pidsmax", Integer.toString(PIDS)).containsEntry("reached",
                Integer.toString(PIDS));
        assertThat(r).containsEntry("kill", "0").containsEntry("wrapper", "137").containsEntry("left", "0");
    }

    @Test
    void should_signal_the_program_only_while_it_is_a_child_of_the_run_wrapper() throws Exception {
        Map<String, String> r = attack("signal", "none");
        // A pid that is no longer the run's (here a stranger's) is not signalled; the program itself is.
        assertThat(r).containsEntry("stranger", "alive").containsEntry("program", "dead");
    }

    /** Runs one scenario of {@code tree-attacks.sh} and returns its {@code key=value} lines. */
    private static Map<String, String> attack(String scenario, String reaper) throws Exception {
        Path dir = Files.createTempDirectory("pod-scripts-");
        Path cg = CGROUPS.resolve("codeexec-test-" + UUID.randomUUID());
        Files.createDirectory(cg);
        try {
            Files.writeString(cg.resolve("pids.max"), Integer.toString(PIDS));
            assertThat(Files.readString(cg.resolve("pids.max")).trim()).isEqualTo(Integer.toString(PIDS));
            Files.writeString(dir.resolve("run"), PodScripts.RUN);
            Files.writeString(dir.resolve("kill"), PodScripts.KILL_TREE);
            Files.writeString(dir.resolve("signal"), PodScripts.SIGNAL);
            Files.writeString(dir.resolve("py"), PodScripts.Reaper.PYTHON.launcher().get(2));
            Files.writeString(dir.resolve("pl"), PodScripts.Reaper.PERL.launcher().get(2));
            Path harness = dir.resolve("tree-attacks.sh");
            try (InputStream in = PodScriptsAttackTest.class.getResourceAsStream("tree-attacks.sh")) {
                Files.write(harness, in.readAllBytes());
            }
            Process p = new ProcessBuilder("sh", "-c", "echo $$ >\"$1/cgroup.procs\" && shift && exec \"$@\"", "sh",
                    cg.toString(), "unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh",
                    harness.toString(), scenario, dir.toString(), reaper, cg.toString())
                    .redirectErrorStream(true).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError(scenario + " did not end within 120 s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            Map<String, String> r = new HashMap<>();
            for (String line : out.split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0 && line.substring(0, eq).matches("[a-z]+")) {
                    r.put(line.substring(0, eq), line.substring(eq + 1).trim());
                }
            }
            System.out.println(scenario + "/" + reaper + ": " + r);
            return r;
        } finally {
            removeCgroup(cg);
            deleteTree(dir);
        }
    }

    private static void removeCgroup(Path cg) throws InterruptedException {
        for (int i = 0; i < 500; i++) {
            try {
                Files.deleteIfExists(cg);
                return;
            } catch (IOException e) {
                Thread.sleep(10); // its last processes are still being torn down
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            s.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
        }
    }
}
