package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxLayoutTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path ws;
    private Path home;
    private Path pins;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("sandbox")).toRealPath();
        ws = Files.createDirectories(root.resolve("workspaces/ws-1"));
        Files.createDirectories(ws.resolve("work"));
        home = Files.createDirectories(tmp.resolve("home/alice")).toRealPath();
        pins = root.resolve("state/runs/r1");
    }

    private SandboxLayout.Plan layout(PermissionProfile p) {
        return SandboxLayout.plan(p, ws, root, List.of(home), pins);
    }

    private Map<String, Mount> plan(PermissionProfile p) {
        return layout(p).mounts().stream().collect(Collectors.toMap(Mount::path, m -> m));
    }

    @Test
    void should_bind_workspace_and_hide_the_rest_of_the_sandbox_root() {
        Map<String, Mount> m = plan(PermissionProfile.workspaceWrite());
        assertThat(m.get("/").kind()).isEqualTo(Mount.Kind.RO_BIND);
        assertThat(m.get(ws.toString()).kind()).isEqualTo(Mount.Kind.BIND);
        assertThat(m.get(root.toString()).kind()).isEqualTo(Mount.Kind.HIDE_DIR);
        assertThat(m.get("/tmp").kind()).isEqualTo(Mount.Kind.SCRATCH);
        assertThat(plan(PermissionProfile.readOnly()).get(ws.toString()).kind()).isEqualTo(Mount.Kind.RO_BIND);
    }

    @Test
    void should_expand_home_rules_and_hide_link_targets() throws IOException {
        Files.createDirectories(home.resolve(".ssh"));
        Path real = Files.createDirectories(tmp.resolve("dotfiles/aws"));
        Files.createSymbolicLink(home.resolve(".aws"), real);
        Files.writeString(home.resolve(".netrc"), "machine x");
        Map<String, Mount> m = plan(PermissionProfile.workspaceWrite());
        assertThat(m.get(home.resolve(".ssh").toString()).kind()).isEqualTo(Mount.Kind.HIDE_DIR);
        assertThat(m.get(real.toRealPath().toString()).kind()).isEqualTo(Mount.Kind.HIDE_DIR);
        assertThat(m.get(home.resolve(".netrc").toString()).kind()).isEqualTo(Mount.Kind.HIDE_FILE);
        assertThat(m).doesNotContainKey(home.resolve(".kube").toString());
    }

    @Test
    void should_protect_existing_git_directory_through_a_verified_descriptor() throws IOException {
        Files.createDirectories(ws.resolve(".git/hooks"));
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite());
        assertThat(plan.pinnedDirs()).containsExactly(ws.resolve(".git").toString());
        assertThat(plan.mounts()).contains(Mount.pinned(ws.resolve(".git").toString(), Mount.Kind.PROTECT, 4));
        assertThat(plan(PermissionProfile.readOnly())).doesNotContainKey(ws.resolve(".git").toString());
    }

    @Test
    void should_bind_a_protected_file_from_a_private_hard_link_never_by_its_name() throws IOException {
        Path gitFile = Files.writeString(ws.resolve(".git"), "gitdir: /elsewhere\n");
        Mount m = plan(PermissionProfile.workspaceWrite()).get(gitFile.toString());
        assertThat(m.kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(m.fd()).isEqualTo(-1);
        Path alias = Path.of(m.source());
        assertThat(alias.getParent()).isEqualTo(pins);
        // The very file that was planned: swapping the workspace name afterwards cannot change what is mounted.
        assertThat(Files.isSameFile(alias, gitFile)).isTrue();
        Files.delete(gitFile);
        Files.createSymbolicLink(gitFile, Path.of("../../../../etc/shadow"));
        assertThat(Files.readString(alias)).isEqualTo("gitdir: /elsewhere\n");
    }

    @Test
    void should_refuse_special_files_where_a_protected_name_is_mounted() throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", ws.resolve(".git").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite()))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining(".git")
                .hasMessageContaining("special file");
    }

    @Test
    void should_pin_read_only_paths_inside_writable_roots_and_nothing_outside() throws IOException {
        Files.createDirectories(ws.resolve("skills/demo"));
        Files.writeString(ws.resolve("work/config.json"), "{}");
        Path out = Files.createDirectories(tmp.resolve("results")).toRealPath();
        Path ref = Files.createDirectories(out.resolve("reference"));
        Path data = Files.createDirectories(tmp.resolve("data")).toRealPath();
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite().withReadPaths("skills/demo",
                "work/config.json", data.toString(), ref.toString()).withWritePaths(out.toString()));
        Map<String, Mount> m = plan.mounts().stream().collect(Collectors.toMap(Mount::path, x -> x));
        // Inside the workspace or a write grant: bound from a descriptor (directories) or a private link (files).
        assertThat(plan.pinnedDirs()).containsExactly(ref.toString(), ws.resolve("skills/demo").toString());
        assertThat(m.get(ref.toString()).fd()).isEqualTo(4);
        assertThat(m.get(ws.resolve("skills/demo").toString()).fd()).isEqualTo(5);
        assertThat(m.get(ws.resolve("work/config.json").toString()).source()).startsWith(pins.toString());
        // Positive control: roots and grants outside writable directories are bound by name, as before.
        for (Path p : List.of(ws, out, data)) {
            assertThat(m.get(p.toString()).fd()).isEqualTo(-1);
            assertThat(m.get(p.toString()).source()).isNull();
        }
        // A path-based sandbox (no pin directory) pins nothing.
        assertThat(SandboxLayout.plan(PermissionProfile.workspaceWrite().withReadPaths("skills/demo"), ws, root,
                List.of(), null).pinnedDirs()).isEmpty();
    }

    @Test
    void should_refuse_more_pinned_directories_than_the_launcher_has_descriptors() throws IOException {
        PermissionProfile p = PermissionProfile.workspaceWrite();
        for (int i = 0; i < 5; i++) {
            Files.createDirectories(ws.resolve("skills/s" + i));
            p = p.withReadPaths("skills/s" + i);
        }
        assertThat(layout(p).pinnedDirs()).hasSize(5);
        Files.createDirectories(ws.resolve("skills/s5"));
        PermissionProfile six = p.withReadPaths("skills/s5");
        assertThatThrownBy(() -> layout(six)).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("more than 5");
    }

    @Test
    void should_refuse_grants_that_reach_into_the_sandbox_root() throws IOException {
        Path other = Files.createDirectories(root.resolve("workspaces/ws-2/work"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite().withReadPaths(other.toString())))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("sandbox root")
                .hasMessageNotContaining(root.toString());
        Path link = Files.createSymbolicLink(tmp.resolve("innocent"), root.resolve("workspaces"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite().withReadPaths(link.toString())))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("sandbox root");
        // Positive control: the run's own workspace, named by its absolute path, is fine.
        assertThat(plan(PermissionProfile.workspaceWrite().withReadPaths(ws.resolve("work").toString())))
                .containsKey(ws.resolve("work").toString());
    }

    @Test
    void should_refuse_planted_links_where_mounts_would_follow_them() throws IOException {
        Files.createSymbolicLink(ws.resolve(".git"), Path.of("/root"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite()))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining(".git");
        Files.delete(ws.resolve(".git"));
        Files.createSymbolicLink(ws.resolve("work/data"), Path.of("/etc"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite().withWritePaths("work/data")))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("symbolic link");
        // A no-access rule on a link is skipped: the target's own rules govern it.
        assertThat(plan(PermissionProfile.workspaceWrite().withNoAccessPaths("work/data")))
                .doesNotContainKey(ws.resolve("work/data").toString());
    }

    @Test
    void should_refuse_grant_that_vanished_and_skip_missing_hidden_paths() throws IOException {
        Path d = Files.createDirectories(tmp.resolve("grant"));
        PermissionProfile p = PermissionProfile.workspaceWrite().withReadPaths(d.toString())
                .withNoAccessPaths(tmp.resolve("never").toString());
        assertThat(plan(p).get(d.toRealPath().toString()).kind()).isEqualTo(Mount.Kind.RO_BIND);
        Files.delete(d);
        assertThatThrownBy(() -> plan(p)).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("no longer exists");
    }

    @Test
    void should_hide_glob_matches_and_prune_nested_hidden_paths() throws IOException {
        Files.createDirectories(ws.resolve("work/a/secrets/deep"));
        Files.writeString(ws.resolve("work/a/.env"), "x");
        Files.writeString(ws.resolve("work/a/secrets/deep/.env"), "x");
        Map<String, Mount> m = plan(PermissionProfile.workspaceWrite().withNoAccessGlobs("**/.env", "**/secrets"));
        assertThat(m.get(ws.resolve("work/a/.env").toString()).kind()).isEqualTo(Mount.Kind.HIDE_FILE);
        assertThat(m.get(ws.resolve("work/a/secrets").toString()).kind()).isEqualTo(Mount.Kind.HIDE_DIR);
        assertThat(m).doesNotContainKey(ws.resolve("work/a/secrets/deep/.env").toString());
        // /root/.ssh under the hidden /root is not mounted twice.
        assertThat(SandboxLayout.plan(PermissionProfile.workspaceWrite(), ws, root, List.of(Path.of("/root")), pins)
                .mounts()).noneMatch(x -> x.path().equals("/root/.ssh"));
    }

    @Test
    void should_answer_visibility_from_the_deepest_operation() {
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite());
        assertThat(plan.visible("/usr/bin/python3")).isTrue();
        assertThat(plan.visible("/root/.pyenv/shims/python3")).isFalse();
        assertThat(plan.visible(root.resolve("workspaces/other/x").toString())).isFalse();
        assertThat(plan.visible(ws.resolve("work/x").toString())).isTrue();
    }

    @Test
    void should_occupy_missing_protected_names_at_writable_roots_with_empty_placeholders() throws IOException {
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite());
        Map<String, Mount> m = plan.mounts().stream().collect(Collectors.toMap(Mount::path, x -> x));
        assertThat(m.get(ws.resolve(".git").toString()).kind()).isEqualTo(Mount.Kind.PLACEHOLDER);
        assertThat(plan.placeholders()).containsExactlyInAnyOrder(ws.resolve(".git").toString(),
                ws.resolve(".codeexec").toString());
        // An empty directory (left by an interrupted run) is a placeholder too; one with content is protected.
        Files.createDirectories(ws.resolve(".git"));
        assertThat(plan(PermissionProfile.workspaceWrite()).get(ws.resolve(".git").toString()).kind())
                .isEqualTo(Mount.Kind.PLACEHOLDER);
        Files.writeString(ws.resolve(".git/HEAD"), "ref: refs/heads/main\n");
        assertThat(plan(PermissionProfile.workspaceWrite()).get(ws.resolve(".git").toString()).kind())
                .isEqualTo(Mount.Kind.PROTECT);
        // Controls: allowed by the profile, or nothing writable, there is no placeholder.
        assertThat(plan(PermissionProfile.workspaceWrite().withProtectedMetadataCreation()))
                .doesNotContainKey(ws.resolve(".codeexec").toString());
        assertThat(layout(PermissionProfile.readOnly()).placeholders()).isEmpty();
        // Removing them after the run removes only what is still an empty directory.
        Files.createDirectories(ws.resolve(".codeexec"));
        plan.removePlaceholders();
        assertThat(ws.resolve(".codeexec")).doesNotExist();
        assertThat(ws.resolve(".git/HEAD")).exists();
    }

    @Test
    void should_hold_every_directory_between_a_writable_root_and_a_hidden_path_in_place() throws IOException {
        Files.createDirectories(ws.resolve("work/a/b"));
        Files.writeString(ws.resolve("work/a/b/secret.txt"), "x");
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite().withNoAccessPaths("work/a/b/secret.txt"));
        Map<String, Mount> m = plan.mounts().stream().collect(Collectors.toMap(Mount::path, x -> x));
        assertThat(m.get(ws.resolve("work/a/b/secret.txt").toString()).kind()).isEqualTo(Mount.Kind.HIDE_FILE);
        for (String d : List.of("work", "work/a", "work/a/b")) {
            assertThat(m.get(ws.resolve(d).toString()).kind()).as(d).isEqualTo(Mount.Kind.KEEP);
        }
        // Inside the workspace they are checked by the launcher, not pinned by descriptors.
        assertThat(plan.checkedDirs()).containsExactly(ws.resolve("work").toString(), ws.resolve("work/a").toString(),
                ws.resolve("work/a/b").toString());
        assertThat(plan.pinnedDirs()).isEmpty();
        // Control: a hidden path directly below the root needs nothing held.
        assertThat(layout(PermissionProfile.workspaceWrite().withNoAccessPaths("work")).checkedDirs()).isEmpty();
    }

    @Test
    void should_refuse_a_hidden_file_with_another_hard_link_and_name_the_rule() throws IOException {
        Files.writeString(ws.resolve("work/secret.txt"), "x");
        Files.createLink(ws.resolve("work/copy.txt"), ws.resolve("work/secret.txt"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite().withNoAccessPaths("work/secret.txt")))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("'work/secret.txt'");
        Files.delete(ws.resolve("work/copy.txt"));
        assertThat(plan(PermissionProfile.workspaceWrite().withNoAccessPaths("work/secret.txt")))
                .containsKey(ws.resolve("work/secret.txt").toString());
    }

    @Test
    void should_refuse_a_write_grant_that_leads_into_sys_through_a_link() throws IOException {
        Path link = Files.createSymbolicLink(tmp.resolve("kernel"), Path.of("/sys/kernel"));
        PermissionProfile p = PermissionProfile.workspaceWrite().withWritePaths(link.toString());
        assertThatThrownBy(() -> plan(p)).isInstanceOf(dev.codeexec.engine.InvalidSpecException.class)
                .hasMessageContaining("/sys");
        assertThat(plan(PermissionProfile.workspaceWrite().withReadPaths(link.toString())))
                .containsKey("/sys/kernel");
    }

    @Test
    void should_refuse_a_grant_through_a_link_inside_a_write_grant() throws IOException {
        Path results = Files.createDirectories(tmp.resolve("results")).toRealPath();
        Files.createSymbolicLink(results.resolve("sub"), Path.of("/etc"));
        PermissionProfile p = PermissionProfile.workspaceWrite().withWritePaths(results.toString());
        assertThatThrownBy(() -> plan(p.withWritePaths(results.resolve("sub").toString())))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("symbolic link");
        // A link outside every writable directory (the host's own) is followed as before.
        Path hostLink = Files.createSymbolicLink(tmp.resolve("etc-link"), Path.of("/etc"));
        assertThat(plan(p.withReadPaths(hostLink.toString()))).containsKey("/etc");
    }

    // ---- protected metadata below the top of a writable root ----

    @Test
    void should_protect_repositories_a_program_left_anywhere_below_the_workspace_root() throws IOException {
        for (String repo : List.of("work/proj", "work/a/b/c/deep", "out/report", "home/cache/x", "runs/r1/y",
                "work/six", "work/seven")) {
            Files.createDirectories(ws.resolve(repo + "/.git/hooks"));
        }
        Files.createDirectories(ws.resolve("work/plain"));
        SandboxLayout.Plan plan = layout(PermissionProfile.workspaceWrite());
        Map<String, Mount> m = plan.mounts().stream().collect(Collectors.toMap(Mount::path, x -> x));
        for (String repo : List.of("work/proj", "work/a/b/c/deep", "out/report", "home/cache/x", "runs/r1/y",
                "work/six", "work/seven")) {
            String git = ws.resolve(repo + "/.git").toString();
            assertThat(m.get(git).kind()).as(repo).isEqualTo(Mount.Kind.PROTECT);
            // Bound by name and checked by the launcher: seven repositories need no seven descriptors.
            assertThat(m.get(git).fd()).as(repo).isEqualTo(-1);
            assertThat(plan.checkedDirs()).as(repo).contains(git);
            assertThat(m.get(ws.resolve(repo).toString()).kind()).as("held in place").isEqualTo(Mount.Kind.KEEP);
        }
        assertThat(plan.pinnedDirs()).isEmpty();
        // Positive control: an ordinary directory next to them is just part of the writable workspace.
        assertThat(m).doesNotContainKey(ws.resolve("work/plain").toString());
    }

    @Test
    void should_leave_a_programs_own_repositories_writable_only_when_the_profile_says_so() throws IOException {
        Files.createDirectories(ws.resolve("work/proj/.git/hooks"));
        PermissionProfile open = PermissionProfile.workspaceWrite().withNestedMetadataWrites();

        assertThat(plan(open)).doesNotContainKey(ws.resolve("work/proj/.git").toString());
        // What the application staged, and the root's own, stay protected regardless.
        Files.createDirectories(ws.resolve("work/staged/.git"));
        Files.createDirectories(ws.resolve(".git/hooks"));
        Map<String, Mount> m = plan(open.withReadPaths("work/staged/.git"));
        assertThat(m.get(ws.resolve("work/staged/.git").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(m.get(ws.resolve(".git").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(plan(PermissionProfile.workspaceWrite()).get(ws.resolve("work/proj/.git").toString()).kind())
                .isEqualTo(Mount.Kind.PROTECT);
    }

    @Test
    void should_protect_repositories_below_a_write_grant_whatever_the_profile_leaves_to_programs()
            throws IOException {
        Path grant = Files.createDirectories(tmp.resolve("projects")).toRealPath();
        Files.createDirectories(grant.resolve("app/.git"));
        Map<String, Mount> m = plan(PermissionProfile.workspaceWrite().withNestedMetadataWrites()
                .withWritePaths(grant.toString()));
        assertThat(m.get(grant.resolve("app/.git").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(m.get(grant.resolve("app/.git").toString()).fd()).as("pinned: not in the workspace")
                .isGreaterThanOrEqualTo(SandboxLayout.FIRST_PINNED_FD);
    }

    @Test
    void should_refuse_a_link_with_a_protected_name_below_the_workspace_root() throws IOException {
        Files.createDirectories(ws.resolve("work/real-git"));
        Files.createDirectories(ws.resolve("work/proj"));
        Files.createSymbolicLink(ws.resolve("work/proj/.git"), ws.resolve("work/real-git"));
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite()))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("'work/proj/.git'")
                .hasMessageContaining("symbolic link").hasMessageNotContaining(tmp.toString());
        // Positive control: with the link gone the plan is made.
        Files.delete(ws.resolve("work/proj/.git"));
        assertThat(plan(PermissionProfile.workspaceWrite())).doesNotContainKey(ws.resolve("work/proj/.git").toString());
    }

    @Test
    void should_protect_the_directory_a_git_file_points_at_inside_the_workspace() throws IOException {
        Files.createDirectories(ws.resolve("work/gitdata/hooks"));
        Files.createDirectories(ws.resolve("work/wt"));
        Files.writeString(ws.resolve("work/wt/.git"), "gitdir: ../gitdata\n");
        Files.createDirectories(ws.resolve("work/sub"));
        Files.writeString(ws.resolve("work/sub/.git"), "gitdir: " + tmp.resolve("elsewhere") + "\n");
        Map<String, Mount> m = plan(PermissionProfile.workspaceWrite());
        assertThat(m.get(ws.resolve("work/wt/.git").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(m.get(ws.resolve("work/gitdata").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        // Outside every writable root the directory is the host's (read-only already): only the file is protected.
        assertThat(m.get(ws.resolve("work/sub/.git").toString()).kind()).isEqualTo(Mount.Kind.PROTECT);
        assertThat(m).doesNotContainKey(tmp.resolve("elsewhere").toString());
    }

    @Test
    void should_refuse_a_git_file_that_points_through_a_link_or_at_a_writable_root() throws IOException {
        Files.createDirectories(ws.resolve("work/wt"));
        Path hostDir = Files.createDirectories(tmp.resolve("host-git"));
        Files.createSymbolicLink(ws.resolve("work/link"), hostDir);
        Files.writeString(ws.resolve("work/wt/.git"), "gitdir: ../link/modules/x\n");
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite()))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("'work/wt/.git'")
                .hasMessageContaining("symbolic link");
        Files.writeString(ws.resolve("work/wt/.git"), "gitdir: ../..\n"); // the workspace root itself
        assertThatThrownBy(() -> plan(PermissionProfile.workspaceWrite()))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("'work/wt/.git'")
                .hasMessageContaining("writable directory");
        // Positive control: a pointer that is no gitdir line protects the file and nothing else.
        Files.writeString(ws.resolve("work/wt/.git"), "not a pointer\n");
        assertThat(plan(PermissionProfile.workspaceWrite()).get(ws.resolve("work/wt/.git").toString()).kind())
                .isEqualTo(Mount.Kind.PROTECT);
    }
}
