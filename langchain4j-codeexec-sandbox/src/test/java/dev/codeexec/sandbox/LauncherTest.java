package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launching shell, run for real with /bin/sh (without bubblewrap). */
class LauncherTest {

    @TempDir
    Path tmp;

    private RunResult launch(Launcher.Spec spec) {
        return ProgramRuns.run(HostProcessChannel.direct(), new ProgramLaunch(Launcher.argv(spec), Map.of(),
                tmp.toString(), null, Duration.ofSeconds(10), 1 << 16, null));
    }

    private String status() throws IOException {
        Path s = tmp.resolve("status");
        return Files.exists(s) ? Files.readString(s) : "";
    }

    private Launcher.Spec spec(List<String> cgroups, List<String> pinned, String seccomp, boolean reportStarted,
                               List<String> command) {
        return new Launcher.Spec("/bin/sh", tmp.resolve("status").toString(), cgroups, null, null, null, pinned,
                seccomp, reportStarted, command);
    }

    @Test
    void should_join_cgroups_set_rlimits_and_exec_the_command() throws IOException {
        Path procs = tmp.resolve("cgroup.procs");
        Files.writeString(procs, "");
        RunResult r = launch(new Launcher.Spec("/bin/sh", tmp.resolve("status").toString(),
                List.of(procs.toString()), 7L, 2048L, 64, List.of(), null, false,
                List.of("/bin/sh", "-c", "echo $$; ulimit -t; ulimit -f; ulimit -n; ulimit -H -n")));
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        String[] lines = r.stdout().split("\n");
        // The launcher joined the group as itself ("0": the writing task), then exec'ed: the command is that task.
        assertThat(Files.readString(procs).strip()).isEqualTo("0");
        assertThat(lines).containsSubsequence("7", "2048", "64", "64");
    }

    @Test
    void should_hand_verified_directories_seccomp_file_and_status_as_descriptors() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("repo/.git")).toRealPath();
        Path skills = Files.createDirectories(tmp.resolve("repo/skills")).toRealPath();
        Path bpf = Files.writeString(tmp.resolve("f.bpf"), "x");
        RunResult r = launch(spec(List.of(), List.of(dir.toString(), skills.toString()), bpf.toString(), false,
                List.of("/bin/sh", "-c", "for fd in 3 4 5 9; do readlink /proc/self/fd/$fd; done")));
        assertThat(r.stdout()).isEqualTo(bpf.toRealPath() + "\n" + dir + "\n" + skills + "\n"
                + tmp.toRealPath().resolve("status") + "\n");
    }

    @Test
    void should_report_the_start_and_close_the_status_descriptor_when_the_command_is_not_bubblewrap()
            throws IOException {
        RunResult r = launch(spec(List.of(), List.of(), null, true,
                List.of("/bin/sh", "-c", "echo forged >&9 2>/dev/null || echo closed; ls /proc/self/fd")));
        assertThat(status()).isEqualTo(Launcher.STARTED + "\n");
        assertThat(r.stdout()).startsWith("closed\n").doesNotContain("\n9\n");
    }

    @Test
    void should_fail_setup_in_the_status_file_when_a_pinned_directory_became_a_link() throws IOException {
        Path target = Files.createDirectories(tmp.resolve("elsewhere")).toRealPath();
        Path link = Files.createSymbolicLink(tmp.toRealPath().resolve("dotgit"), target);
        RunResult r = launch(spec(List.of(), List.of(link.toString()), null, true, List.of("/bin/echo", "ran")));
        assertThat(r.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(status()).startsWith(Launcher.FAILED + " " + Launcher.CHANGED + " ").contains("changed");
        assertThat(r.stdout()).doesNotContain("ran");
        // The failure is reported out of band: nothing on the program's streams.
        assertThat(r.stderr()).isEmpty();
    }

    @Test
    void should_fail_setup_when_cgroup_or_seccomp_file_is_unusable() throws IOException {
        RunResult cg = launch(spec(List.of(tmp.resolve("no/such/cgroup.procs").toString()), List.of(), null, true,
                List.of("/bin/echo", "ran")));
        assertThat(cg.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(status()).startsWith(Launcher.FAILED + " cgroup ");
        Files.delete(tmp.resolve("status"));
        RunResult sc = launch(spec(List.of(), List.of(), tmp.resolve("missing.bpf").toString(), true,
                List.of("/bin/echo", "ran")));
        assertThat(sc.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(status()).startsWith(Launcher.FAILED + " seccomp ");
        assertThat(cg.stdout() + sc.stdout()).doesNotContain("ran");
    }

    @Test
    void should_pass_hostile_arguments_as_data() {
        RunResult r = launch(spec(List.of(), List.of(), null, false,
                List.of("/usr/bin/printf", "%s|", "$(id)", "`id`", "; echo pwned", "'")));
        assertThat(r.stdout()).isEqualTo("$(id)|`id`|; echo pwned|'|");
    }

    @Test
    void should_check_directories_bound_by_name_and_fail_when_one_became_a_link() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("ws/work")).toRealPath();
        RunResult ok = launch(new Launcher.Spec("/bin/sh", tmp.resolve("status").toString(), List.of(), null, null,
                null, List.of(), List.of(dir.toString()), null, true, List.of("/bin/echo", "ran")));
        assertThat(ok.stdout()).isEqualTo("ran\n");
        Path target = Files.createDirectories(tmp.resolve("elsewhere")).toRealPath();
        Files.delete(dir);
        Files.createSymbolicLink(dir, target);
        Files.delete(tmp.resolve("status"));
        RunResult changed = launch(new Launcher.Spec("/bin/sh", tmp.resolve("status").toString(), List.of(), null,
                null, null, List.of(), List.of(dir.toString()), null, true, List.of("/bin/echo", "ran")));
        assertThat(changed.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(status()).startsWith(Launcher.FAILED + " " + Launcher.CHANGED + " ");
        assertThat(changed.stdout()).doesNotContain("ran");
    }

    @Test
    void should_swap_the_control_groups_of_a_launch_and_nothing_else() {
        List<String> argv = Launcher.argv(new Launcher.Spec("/bin/sh", "/s", List.of("/cg/a/tasks", "/cg/b/tasks"),
                7L, null, null, List.of("/p"), null, false, List.of("/usr/bin/bwrap", "x")));
        List<String> swapped = Launcher.withCgroups(argv, List.of("/cg/planned/tasks"));
        assertThat(swapped).containsExactlyElementsOf(Launcher.argv(new Launcher.Spec("/bin/sh", "/s",
                List.of("/cg/planned/tasks"), 7L, null, null, List.of("/p"), null, false,
                List.of("/usr/bin/bwrap", "x"))));
        assertThat(Launcher.withCgroups(argv, List.of())).doesNotContain("/cg/a/tasks", "/cg/planned/tasks");
    }
}
