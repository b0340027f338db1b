package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fake pod isolates like a container: its own processes, a read-only root, its user, nothing left on close. */
class FakePodTest {

    private FakePod pod;

    @BeforeEach
    void startPod() {
        Requirements.require(FakePod.available(), "root with bwrap, nsenter and setpriv (the fake pod)");
        pod = FakePod.start("fake-pod-test");
    }

    @AfterEach
    void closePod() {
        if (pod != null) {
            pod.close();
        }
    }

    private Out run(String script) throws IOException {
        return run(script, null);
    }

    private Out run(String script, String stdin) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = pod.exec(List.of("sh", "-c", script),
                stdin == null ? null : new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), out, err);
        return new Out(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    record Out(int code, String stdout, String stderr) {
    }

    @Test
    void should_see_a_process_from_another_exec_when_one_exec_left_it_running() throws IOException {
        Out started = run("sleep 300 >/dev/null 2>&1 & echo $!");
        String pid = started.stdout().trim();
        assertThat(pid).matches("\\d+");

        Out seen = run("cat /proc/" + pid + "/cmdline | tr '\\0' ' '");
        assertThat(seen.code()).isZero();
        assertThat(seen.stdout()).startsWith("sleep 300");
    }

    @Test
    void should_refuse_writes_when_the_target_is_the_root_file_system() throws IOException {
        Out root = run("touch /x");
        assertThat(root.code()).isNotZero();
        assertThat(root.stderr()).contains("Read-only file system");
        Out usr = run("touch /usr/x");
        assertThat(usr.code()).isNotZero();
        // positive control: the volume and /tmp are writable by the pod's user
        Out volume = run("echo data > /codeexec/f && cat /codeexec/f && stat -c %u /codeexec/f && touch /tmp/t");
        assertThat(volume.code()).isZero();
        assertThat(volume.stdout()).isEqualTo("data\n" + PodLayout.DEFAULT_UID + "\n");
    }

    @Test
    void should_run_as_the_pods_user_when_an_exec_starts() throws IOException {
        Out id = run("id -u; id -g; id -G; echo $HOME; pwd; env | sort | cut -d= -f1 | tr '\\n' ' '");
        String u = Long.toString(PodLayout.DEFAULT_UID);
        assertThat(id.stdout()).isEqualTo(u + "\n" + u + "\n" + u + "\n" + PodLayout.ROOT + "\n/\nHOME PATH PWD ");
        assertThat(run("grep NoNewPrivs /proc/self/status").stdout()).contains("1");
    }

    @Test
    void should_run_as_the_given_user_when_the_pod_was_made_for_it() throws IOException {
        try (FakePod other = FakePod.start("other", 4242, 4343, List.of(PodLayout.VOLUME))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int code = other.exec(List.of("sh", "-c", "id -u; id -g; stat -c '%u %g' /codeexec"), null, out, null);
            assertThat(code).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("4242\n4343\n4242 4343\n");
        }
    }

    @Test
    void should_not_see_host_processes_when_listing_proc() throws IOException {
        long hostPid = ProcessHandle.current().pid();
        Out ls = run("ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; cat /proc/1/cmdline | tr '\\0' ' '");
        String[] lines = ls.stdout().split("\n");
        // the pod's init, the exec's shell and its pipeline: a handful of small pids, never the JVM's
        assertThat(lines[0].trim().split(" ")).doesNotContain(Long.toString(hostPid)).contains("1");
        assertThat(lines[0].trim().split(" ")).hasSizeLessThan(10);
        assertThat(lines[1]).startsWith("sh -c while");
        // positive control: the JVM is visible from the host
        assertThat(Files.exists(Path.of("/proc", Long.toString(hostPid)))).isTrue();
    }

    @Test
    void should_pass_stdin_to_its_end_when_an_exec_reads_it() throws IOException {
        Out cat = run("cat; echo end", "line1\nline2\n");
        assertThat(cat.code()).isZero();
        assertThat(cat.stdout()).isEqualTo("line1\nline2\nend\n");
        assertThat(run("exit 7").code()).isEqualTo(7);
    }

    @Test
    void should_leave_no_process_when_closed() throws Exception {
        String pid = run("sleep 300 >/dev/null 2>&1 & echo $!").stdout().trim();
        long init = pod.initPid();
        List<Long> inPod = podProcesses(init);
        assertThat(inPod).hasSizeGreaterThanOrEqualTo(2); // init, its sleep, the background sleep
        assertThat(pid).matches("\\d+");

        pod.close();

        assertThat(pod.isAlive()).isFalse();
        for (long p : inPod) {
            assertThat(Files.exists(Path.of("/proc", Long.toString(p)))).as("pid %d", p).isFalse();
        }
        Process pgrep = new ProcessBuilder("pgrep", "-f", "^sleep 300$").start();
        String left = new String(pgrep.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        pgrep.waitFor();
        for (String p : left.isEmpty() ? new String[0] : left.split("\n")) {
            // a sleep 300 elsewhere on the host (another test) must not be in this pod's namespace
            assertThat(inPod).doesNotContain(Long.parseLong(p));
        }
    }

    @Test
    void should_serve_as_pod_commands_when_the_files_code_uses_it() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PodCommands.Result r = pod.commands().run("ignored", List.of("sh", "-c", "cat; echo oops >&2; exit 4"),
                new ByteArrayInputStream("in".getBytes(StandardCharsets.UTF_8)), out, Duration.ofSeconds(30));
        assertThat(r.exitCode()).isEqualTo(4);
        assertThat(r.stderr()).isEqualTo("oops\n");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("in");
    }

    @Test
    void should_resolve_commands_on_the_pods_path_when_asked() {
        assertThat(pod.resolve("sh")).hasValueSatisfying(p -> assertThat(p).endsWith("/sh"));
        assertThat(pod.resolve("/bin/sh")).contains("/bin/sh");
        assertThat(pod.resolve("no-such-command")).isEmpty();
    }

    /** The host pids whose PID namespace is the pod init's. */
    private static List<Long> podProcesses(long init) throws IOException {
        String ns = Files.readSymbolicLink(Path.of("/proc", Long.toString(init), "ns", "pid")).toString();
        return ProcessHandle.allProcesses().map(ProcessHandle::pid).filter(p -> {
            try {
                return Files.readSymbolicLink(Path.of("/proc", Long.toString(p), "ns", "pid")).toString().equals(ns);
            } catch (IOException e) {
                return false;
            }
        }).toList();
    }
}
