package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.process.HostLaunch;
import dev.codeexec.process.HostProcesses;
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
        return HostProcesses.run(new HostLaunch(Launcher.argv(spec), Map.of(), tmp, null, Duration.ofSeconds(10),
                1 << 16, null));
    }

    @Test
    void should_join_cgroups_set_rlimits_and_exec_the_command() throws IOException {
        Path procs = tmp.resolve("cgroup.procs");
        Files.writeString(procs, "");
        RunResult r = launch(new Launcher.Spec("/bin/sh", List.of(procs.toString()), 7L, 2048L, 64, List.of(), null,
                List.of("/bin/sh", "-c", "echo $$; ulimit -t; ulimit -f; ulimit -n; ulimit -H -n")));
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        String[] lines = r.stdout().split("\n");
        // The launcher exec'ed: the command kept its PID, the one written into the cgroup.
        assertThat(Files.readString(procs).strip()).isEqualTo(lines[0]);
        assertThat(lines).containsSubsequence("7", "2048", "64", "64");
    }

    @Test
    void should_hand_verified_directories_and_seccomp_file_as_descriptors() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("repo/.git")).toRealPath();
        Path bpf = Files.writeString(tmp.resolve("f.bpf"), "x");
        RunResult r = launch(new Launcher.Spec("/bin/sh", List.of(), null, null, null, List.of(dir.toString()),
                bpf.toString(), List.of("/bin/sh", "-c", "readlink /proc/self/fd/3; readlink /proc/self/fd/4")));
        assertThat(r.stdout()).isEqualTo(bpf.toRealPath() + "\n" + dir + "\n");
    }

    @Test
    void should_fail_setup_when_a_protected_directory_became_a_link() throws IOException {
        Path target = Files.createDirectories(tmp.resolve("elsewhere")).toRealPath();
        Path link = Files.createSymbolicLink(tmp.toRealPath().resolve("dotgit"), target);
        RunResult r = launch(new Launcher.Spec("/bin/sh", List.of(), null, null, null, List.of(link.toString()), null,
                List.of("/bin/echo", "ran")));
        assertThat(r.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(r.stderr()).startsWith(Launcher.SETUP_PREFIX).contains("protected path changed");
        assertThat(r.stdout()).doesNotContain("ran");
    }

    @Test
    void should_fail_setup_when_cgroup_or_seccomp_file_is_unusable() {
        RunResult cg = launch(new Launcher.Spec("/bin/sh", List.of(tmp.resolve("no/such/cgroup.procs").toString()),
                null, null, null, List.of(), null, List.of("/bin/echo", "ran")));
        assertThat(cg.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(cg.stderr()).contains("cgroup");
        RunResult sc = launch(new Launcher.Spec("/bin/sh", List.of(), null, null, null, List.of(),
                tmp.resolve("missing.bpf").toString(), List.of("/bin/echo", "ran")));
        assertThat(sc.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
        assertThat(sc.stderr()).contains("seccomp");
    }

    @Test
    void should_pass_hostile_arguments_as_data() {
        RunResult r = launch(new Launcher.Spec("/bin/sh", List.of(), null, null, null, List.of(), null,
                List.of("/usr/bin/printf", "%s|", "$(id)", "`id`", "; echo pwned", "'")));
        assertThat(r.stdout()).isEqualTo("$(id)|`id`|; echo pwned|'|");
    }
}
