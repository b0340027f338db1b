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

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("sandbox")).toRealPath();
        ws = Files.createDirectories(root.resolve("workspaces/ws-1"));
        Files.createDirectories(ws.resolve("work"));
        home = Files.createDirectories(tmp.resolve("home/alice")).toRealPath();
    }

    private Map<String, Mount> plan(PermissionProfile p) {
        return SandboxLayout.plan(p, ws, root, List.of(home)).mounts().stream()
                .collect(Collectors.toMap(Mount::path, m -> m));
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
        SandboxLayout.Plan plan = SandboxLayout.plan(PermissionProfile.workspaceWrite(), ws, root, List.of());
        assertThat(plan.protectedDirs()).containsExactly(ws.resolve(".git").toString());
        assertThat(plan.mounts()).contains(new Mount(ws.resolve(".git").toString(), Mount.Kind.RO_BIND_FD, 4));
        assertThat(plan(PermissionProfile.readOnly())).doesNotContainKey(ws.resolve(".git").toString());
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
        assertThat(SandboxLayout.plan(PermissionProfile.workspaceWrite(), ws, root, List.of(Path.of("/root")))
                .mounts()).noneMatch(x -> x.path().equals("/root/.ssh"));
    }

    @Test
    void should_answer_visibility_from_the_deepest_operation() {
        SandboxLayout.Plan plan = SandboxLayout.plan(PermissionProfile.workspaceWrite(), ws, root, List.of());
        assertThat(plan.visible("/usr/bin/python3")).isTrue();
        assertThat(plan.visible("/root/.pyenv/shims/python3")).isFalse();
        assertThat(plan.visible(root.resolve("workspaces/other/x").toString())).isFalse();
        assertThat(plan.visible(ws.resolve("work/x").toString())).isTrue();
    }
}
