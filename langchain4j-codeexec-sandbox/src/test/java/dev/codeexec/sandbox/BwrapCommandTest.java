package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BwrapCommandTest {

    private static BwrapCommand.Spec spec(boolean restrict, ProcMode proc, List<Mount> mounts) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/bin:/bin");
        env.put("HOME", "/sb/ws/home");
        return new BwrapCommand.Spec("/usr/bin/bwrap", restrict, proc, mounts, 1024, 3, 9, env, "/sb/ws/work",
                List.of("python3", "-c", "print(1)"));
    }

    private static final List<Mount> LAYOUT = List.of(
            Mount.of("/sb/ws", Mount.Kind.BIND),
            Mount.of("/root", Mount.Kind.HIDE_DIR),
            Mount.of("/", Mount.Kind.RO_BIND),
            Mount.of("/sb", Mount.Kind.HIDE_DIR),
            Mount.of("/etc/shadow", Mount.Kind.HIDE_FILE),
            Mount.pinned("/sb/ws/.git", Mount.Kind.PROTECT, 4),
            Mount.aliased("/sb/ws/.codeexec", Mount.Kind.PROTECT, "/sb/state/runs/r1/pin-0"),
            Mount.pinned("/sb/ws/skills/demo", Mount.Kind.RO_BIND, 5),
            Mount.pinned("/sb/ws/data/out", Mount.Kind.BIND, 6),
            Mount.of("/tmp", Mount.Kind.SCRATCH),
            Mount.of("/root/project", Mount.Kind.RO_BIND));

    @Test
    void should_start_with_namespaces_capability_drop_and_session() {
        List<String> argv = BwrapCommand.argv(spec(true, ProcMode.FRESH, LAYOUT));
        assertThat(argv.subList(0, 18)).containsExactly("/usr/bin/bwrap", "--unshare-user", "--disable-userns",
                "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
                "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                "--json-status-fd", "9", "--ro-bind", "/");
        assertThat(BwrapCommand.argv(spec(false, ProcMode.FRESH, LAYOUT))).doesNotContain("--unshare-net")
                .contains("--new-session", "--die-with-parent", "--cap-drop");
    }

    @Test
    void should_order_mounts_so_most_specific_wins() {
        List<String> argv = BwrapCommand.argv(spec(true, ProcMode.FRESH, LAYOUT));
        List<String> targets = new ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            switch (argv.get(i)) {
                case "--ro-bind", "--bind" -> targets.add(argv.get(i) + " " + argv.get(i + 2));
                case "--tmpfs", "--dev", "--proc" -> targets.add(argv.get(i) + " " + argv.get(i + 1));
                case "--ro-bind-fd", "--bind-fd" -> targets.add(argv.get(i) + " " + argv.get(i + 1) + " "
                        + argv.get(i + 2));
                default -> {
                }
            }
        }
        assertThat(targets).containsExactly("--ro-bind /", "--dev /dev", "--proc /proc", "--tmpfs /root",
                "--tmpfs /sb", "--tmpfs /tmp", "--ro-bind /root/project", "--bind /sb/ws", "--ro-bind /etc/shadow",
                "--ro-bind /sb/ws/.codeexec", "--ro-bind-fd 4 /sb/ws/.git", "--ro-bind-fd 5 /sb/ws/skills/demo",
                "--bind-fd 6 /sb/ws/data/out");
        assertThat(String.join(" ", argv)).contains("--ro-bind /dev/null /etc/shadow");
    }

    @Test
    void should_never_bind_a_pinned_path_by_its_name() {
        String line = String.join(" ", BwrapCommand.argv(spec(true, ProcMode.FRESH, LAYOUT)));
        // A pinned file is bound from its private link, a pinned directory from its verified descriptor: the
        // workspace names (which a concurrent program may swap for links) are only destinations.
        assertThat(line).contains("--ro-bind /sb/state/runs/r1/pin-0 /sb/ws/.codeexec")
                .doesNotContain("--ro-bind /sb/ws/.codeexec /sb/ws/.codeexec")
                .doesNotContain("--ro-bind /sb/ws/.git /sb/ws/.git")
                .doesNotContain("--bind /sb/ws/data/out /sb/ws/data/out");
    }

    @Test
    void should_keep_leaf_hidden_dirs_untraversable_and_remount_them_read_only() {
        String line = String.join(" ", BwrapCommand.argv(spec(true, ProcMode.FRESH, LAYOUT)));
        // /root holds a deeper grant, so it must stay traversable; /sb holds the workspace.
        assertThat(line).contains("--perms 0755 --tmpfs /root").contains("--perms 0755 --tmpfs /sb")
                .contains("--size 1024 --perms 1777 --tmpfs /tmp");
        String leaf = String.join(" ", BwrapCommand.argv(spec(true, ProcMode.FRESH, List.of(
                Mount.of("/", Mount.Kind.RO_BIND), Mount.of("/home/u/.ssh", Mount.Kind.HIDE_DIR)))));
        assertThat(leaf).contains("--perms 0000 --tmpfs /home/u/.ssh")
                .contains("--remount-ro /home/u/.ssh --seccomp 3");
    }

    @Test
    void should_end_with_seccomp_clean_environment_cwd_and_command() {
        List<String> argv = BwrapCommand.argv(spec(true, ProcMode.FRESH, LAYOUT));
        String tail = String.join(" ", argv.subList(argv.indexOf("--seccomp"), argv.size()));
        assertThat(tail).isEqualTo("--seccomp 3 --clearenv --setenv PATH /usr/bin:/bin --setenv HOME /sb/ws/home "
                + "--chdir /sb/ws/work -- python3 -c print(1)");
    }

    @Test
    void should_mask_proc_when_no_fresh_proc() {
        String line = String.join(" ", BwrapCommand.argv(spec(true, ProcMode.MASKED, LAYOUT)));
        assertThat(line).doesNotContain("--proc").contains("--perms 0555 --tmpfs /proc")
                .contains("--remount-ro /proc");
    }

    @Test
    void should_refuse_two_operations_on_one_path() {
        assertThatThrownBy(() -> BwrapCommand.argv(spec(true, ProcMode.FRESH, List.of(
                Mount.of("/x", Mount.Kind.RO_BIND), Mount.of("/x", Mount.Kind.HIDE_DIR)))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Mount.of("relative", Mount.Kind.RO_BIND)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void should_only_add_pid_namespace_when_sandbox_is_off() {
        List<String> argv = BwrapCommand.unsandboxedArgv("/usr/bin/bwrap", 9, Map.of("A", "1"), "/w",
                List.of("true"));
        assertThat(argv).containsExactly("/usr/bin/bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc",
                "/proc", "--die-with-parent", "--new-session", "--json-status-fd", "9", "--clearenv", "--setenv", "A",
                "1", "--chdir", "/w", "--", "true");
    }

    @Test
    void should_remount_the_fresh_proc_read_only_and_render_held_and_placeholder_directories() {
        List<Mount> mounts = List.of(Mount.of("/", Mount.Kind.RO_BIND), Mount.of("/sb/ws", Mount.Kind.BIND),
                Mount.of("/sb/ws/work", Mount.Kind.KEEP), Mount.of("/sb/ws/work/.env", Mount.Kind.HIDE_FILE),
                Mount.of("/sb/ws/.git", Mount.Kind.PLACEHOLDER), Mount.of("/srv/g/sys", Mount.Kind.REMOUNT_RO));
        String line = String.join(" ", BwrapCommand.argv(spec(true, ProcMode.FRESH, mounts)));
        assertThat(line).contains("--proc /proc").contains("--remount-ro /proc")
                .contains("--bind /sb/ws/work /sb/ws/work")
                .contains("--perms 0555 --tmpfs /sb/ws/.git").contains("--remount-ro /sb/ws/.git")
                .contains("--remount-ro /srv/g/sys").doesNotContain("--bind /srv/g/sys");
    }

    @Test
    void should_start_through_the_change_of_user_and_run_the_program_under_the_process_limit() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/bin:/bin");
        List<String> argv = BwrapCommand.argv(new BwrapCommand.Spec("/usr/bin/bwrap", true, ProcMode.FRESH,
                List.of(Mount.of("/", Mount.Kind.RO_BIND)), 1024, 3, 9, env, "/w", List.of("python3", "x.py"),
                List.of("/usr/bin/setpriv", "--reuid=99999", "--regid=99999", "--clear-groups", "--"),
                List.of("--uid", "99999", "--gid", "99999"), List.of("/bin/sh", "-c", "ulimit -p \"$1\"", "l", "8")));
        assertThat(argv.subList(0, 6)).containsExactly("/usr/bin/setpriv", "--reuid=99999", "--regid=99999",
                "--clear-groups", "--", "/usr/bin/bwrap");
        assertThat(String.join(" ", argv)).contains("--cap-drop ALL --uid 99999 --gid 99999")
                .endsWith("--chdir /w -- /bin/sh -c ulimit -p \"$1\" l 8 python3 x.py");
    }
}
