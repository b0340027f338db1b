package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PermissionProfileTest {

    @TempDir
    Path tmp;

    @Test
    void should_read_host_and_write_workspace_when_workspace_write() {
        PermissionProfile p = PermissionProfile.workspaceWrite();
        assertThat(p.enforcement()).isEqualTo(PermissionProfile.Enforcement.MANAGED);
        assertThat(p.network()).isEqualTo(NetworkMode.RESTRICTED);
        assertThat(p.rules()).contains(new PermissionProfile.PathRule("/", FileAccess.READ),
                new PermissionProfile.PathRule(".", FileAccess.WRITE),
                new PermissionProfile.PathRule("/root", FileAccess.NONE),
                new PermissionProfile.PathRule("~/.ssh", FileAccess.NONE),
                new PermissionProfile.PathRule("/etc/shadow", FileAccess.NONE));
        assertThat(p.protectedMetadata()).contains(".git");
    }

    @Test
    void should_keep_workspace_read_only_when_read_only() {
        assertThat(PermissionProfile.readOnly().rules()).contains(new PermissionProfile.PathRule(".", FileAccess.READ))
                .doesNotContain(new PermissionProfile.PathRule(".", FileAccess.WRITE));
    }

    @Test
    void should_copy_on_write() {
        PermissionProfile base = PermissionProfile.workspaceWrite();
        PermissionProfile changed = base.withReadPaths(tmp.toString()).withNetwork(NetworkMode.ENABLED);
        assertThat(base.rules()).doesNotContain(new PermissionProfile.PathRule(tmp.toString(), FileAccess.READ));
        assertThat(base.network()).isEqualTo(NetworkMode.RESTRICTED);
        assertThat(changed.rules()).contains(new PermissionProfile.PathRule(tmp.toString(), FileAccess.READ));
        assertThat(changed).isNotEqualTo(base);
        assertThat(base.withReadPaths(tmp.toString())).isEqualTo(base.withReadPaths(tmp.toString()))
                .hasSameHashCodeAs(base.withReadPaths(tmp.toString()));
    }

    @Test
    void should_replace_read_grant_with_write_grant_on_same_path() {
        PermissionProfile p = PermissionProfile.workspaceWrite().withReadPaths("data").withWritePaths("data/");
        assertThat(p.rules()).contains(new PermissionProfile.PathRule("data", FileAccess.WRITE))
                .doesNotContain(new PermissionProfile.PathRule("data", FileAccess.READ));
    }

    @Test
    void should_refuse_grant_of_missing_host_path() {
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths(tmp.resolve("nope").toString()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("does not exist");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths(tmp.resolve("nope").toString()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("does not exist");
        // No-access rules on missing paths are fine: nothing to hide yet.
        PermissionProfile.workspaceWrite().withNoAccessPaths(tmp.resolve("nope").toString());
    }

    @Test
    void should_refuse_glob_where_only_exact_paths_work() {
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("/etc/*.conf"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("glob");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths("out/**"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("glob");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessPaths("**/.env"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("withNoAccessGlobs");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessGlobs("/etc/*"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("workspace-relative");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessGlobs("a/../b*"))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_treat_braces_as_glob_syntax_like_every_other_glob_of_the_library() {
        // An alternation is a glob (WorkspaceGlob, the one syntax): as an exact path it would hide nothing.
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessPaths("work/{a,b}"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("glob")
                .hasMessageContaining("withNoAccessGlobs");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("/srv/{a,b}"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("glob");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withProtectedMetadata(".{git,hg}"))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessGlobs("work/{a,b"))
                .isInstanceOf(InvalidSpecException.class);
        // Positive control: the same pattern is a no-access glob, matching both names.
        PermissionProfile p = PermissionProfile.workspaceWrite().withNoAccessGlobs("work/{a,b}");
        assertThat(p.noAccessGlobs()).containsExactly("work/{a,b}");
        AccessDecision d = new AccessDecision(p);
        assertThat(d.canRead("work/a")).isFalse();
        assertThat(d.canRead("work/b")).isFalse();
        assertThat(d.canRead("work/c")).isTrue();
    }

    @Test
    void should_refuse_contradictory_rules() {
        String dir = tmp.toString();
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNoAccessPaths(dir).withReadPaths(dir))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("contradictory");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths(dir).withNoAccessPaths(dir))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("contradictory");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("/root"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("contradictory");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths(".git/hooks"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("protected");
        assertThatThrownBy(() -> PermissionProfile.dangerFullAccess().withNetwork(NetworkMode.RESTRICTED))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("cannot restrict");
        assertThatThrownBy(() -> PermissionProfile.dangerFullAccess().withReadPaths(dir))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("no effect");
        assertThatThrownBy(() -> PermissionProfile.external(NetworkMode.ENABLED).withNoAccessGlobs("x"))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_refuse_bad_paths() {
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths("/"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("dangerFullAccess");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("../x"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("..");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("/usr/../etc"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("..");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths("~/.cache"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("no-access");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withReadPaths(" "))
                .isInstanceOf(InvalidSpecException.class);
        assertThat(PermissionProfile.workspaceWrite().withNoAccessPaths("~/.config/app").rules())
                .contains(new PermissionProfile.PathRule("~/.config/app", FileAccess.NONE));
        assertThat(PermissionProfile.workspaceWrite().withReadPaths("./src//data/").rules())
                .contains(new PermissionProfile.PathRule("src/data", FileAccess.READ));
    }

    @Test
    void should_parse_network_modes_and_presets() {
        assertThat(NetworkMode.parse(" Enabled ")).isEqualTo(NetworkMode.ENABLED);
        assertThat(NetworkMode.parse("restricted")).isEqualTo(NetworkMode.RESTRICTED);
        assertThatThrownBy(() -> NetworkMode.parse("proxy")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("'proxy'");
        assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withNetwork("open"))
                .isInstanceOf(InvalidSpecException.class);
        assertThat(PermissionProfile.preset("read-only")).isEqualTo(PermissionProfile.readOnly());
        assertThat(PermissionProfile.preset("danger-full-access").enforcement())
                .isEqualTo(PermissionProfile.Enforcement.DISABLED);
        assertThatThrownBy(() -> PermissionProfile.preset("yolo")).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_scope_per_run_grants_to_a_copy() {
        PermissionProfile base = PermissionProfile.workspaceWrite();
        PermissionProfile run = new AdditionalPermissions(List.of(tmp.toString()), List.of("out"),
                NetworkMode.ENABLED).applyTo(base);
        assertThat(run.rules()).contains(new PermissionProfile.PathRule(tmp.toString(), FileAccess.READ));
        assertThat(run.network()).isEqualTo(NetworkMode.ENABLED);
        assertThat(base).isEqualTo(PermissionProfile.workspaceWrite());
        assertThatThrownBy(() -> AdditionalPermissions.read("/etc/shadow").applyTo(base))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("contradictory");
        assertThat(AdditionalPermissions.NONE.applyTo(base)).isSameAs(base);
    }

    @Test
    void should_declare_external_isolation_with_its_network() {
        PermissionProfile p = PermissionProfile.external(NetworkMode.RESTRICTED);
        assertThat(p.enforcement()).isEqualTo(PermissionProfile.Enforcement.EXTERNAL);
        assertThat(p.network()).isEqualTo(NetworkMode.RESTRICTED);
        assertThat(p.rules()).isEmpty();
    }

    @Test
    void should_let_programs_create_protected_metadata_only_when_asked_to() {
        PermissionProfile p = PermissionProfile.workspaceWrite();
        assertThat(p.allowsProtectedMetadataCreation()).isFalse();
        PermissionProfile allowed = p.withProtectedMetadataCreation();
        assertThat(allowed.allowsProtectedMetadataCreation()).isTrue();
        assertThat(allowed).isNotEqualTo(p);
        assertThat(allowed.withNetwork(NetworkMode.ENABLED).withProtectedMetadata(".hg")
                .allowsProtectedMetadataCreation()).isTrue();
        assertThatThrownBy(() -> PermissionProfile.dangerFullAccess().withProtectedMetadataCreation())
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_keep_nested_metadata_protected_unless_the_profile_leaves_programs_their_own() {
        PermissionProfile base = PermissionProfile.workspaceWrite();
        PermissionProfile open = base.withNestedMetadataWrites();

        assertThat(base.allowsNestedMetadataWrites()).isFalse();
        assertThat(open.allowsNestedMetadataWrites()).isTrue();
        assertThat(open.allowsProtectedMetadataCreation()).as("a separate switch").isFalse();
        assertThat(open).isNotEqualTo(base).isEqualTo(base.withNestedMetadataWrites())
                .hasSameHashCodeAs(base.withNestedMetadataWrites());
        assertThat(open.toString()).contains("nestedMetadataWrites");
        assertThat(open.withNetwork(NetworkMode.ENABLED).withProtectedMetadataCreation().withProtectedMetadata(".hg")
                .withReadPaths("work").allowsNestedMetadataWrites()).as("kept by every copy").isTrue();
        assertThatThrownBy(() -> PermissionProfile.dangerFullAccess().withNestedMetadataWrites())
                .isInstanceOf(dev.codeexec.engine.InvalidSpecException.class).hasMessageContaining("has no effect");
    }
}
