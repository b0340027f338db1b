package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AccessDecisionTest {

    @Test
    void should_let_most_specific_rule_win() {
        AccessDecision d = new AccessDecision(PermissionProfile.workspaceWrite()
                .withNoAccessPaths("work/secret").withReadPaths("work/secret/public"));
        assertThat(d.decide(".")).isEqualTo(FileAccess.WRITE);
        assertThat(d.decide("work/x.py")).isEqualTo(FileAccess.WRITE);
        assertThat(d.decide("work/secret")).isEqualTo(FileAccess.NONE);
        assertThat(d.decide("work/secret/key")).isEqualTo(FileAccess.NONE);
        assertThat(d.decide("work/secret/public/readme")).isEqualTo(FileAccess.READ);
        assertThat(d.decide("work/secretive")).isEqualTo(FileAccess.WRITE);
    }

    @Test
    void should_resolve_ties_none_over_write_over_read() {
        // A glob counts as an exact rule on the path it matches: on equal specificity no-access wins.
        AccessDecision d = new AccessDecision(PermissionProfile.workspaceWrite().withReadPaths("work/a.env")
                .withNoAccessGlobs("work/*.env"));
        assertThat(d.decide("work/a.env")).isEqualTo(FileAccess.NONE);
        // Protected metadata beats the write grant of its root.
        assertThat(new AccessDecision(PermissionProfile.workspaceWrite()).decide(".git/hooks/pre-commit"))
                .isEqualTo(FileAccess.READ);
        // A deeper grant beats a glob that matched a shallower path.
        AccessDecision nested = new AccessDecision(PermissionProfile.workspaceWrite().withNoAccessGlobs("priv*")
                .withWritePaths("private/shared"));
        assertThat(nested.decide("private/x")).isEqualTo(FileAccess.NONE);
        assertThat(nested.decide("private/shared/x")).isEqualTo(FileAccess.WRITE);
    }

    @Test
    void should_hide_glob_matches_at_any_depth() {
        AccessDecision d = new AccessDecision(PermissionProfile.workspaceWrite().withNoAccessGlobs("**/.env"));
        assertThat(d.canRead(".env")).isFalse();
        assertThat(d.canRead("work/deep/er/.env")).isFalse();
        assertThat(d.canWrite("work/.env")).isFalse();
        assertThat(d.canRead("work/.envrc")).isTrue();
        assertThat(d.canWrite("work/main.py")).isTrue();
    }

    @Test
    void should_let_application_write_read_only_workspace_but_never_hidden_paths() {
        AccessDecision d = new AccessDecision(PermissionProfile.readOnly().withNoAccessPaths("work/hidden"));
        assertThat(d.decide("work/code.py")).isEqualTo(FileAccess.READ);
        assertThat(d.canWrite("work/code.py")).isTrue();
        assertThat(d.canWrite("work/hidden/x")).isFalse();
    }

    @Test
    void should_allow_everything_without_managed_sandbox() {
        assertThat(new AccessDecision(PermissionProfile.dangerFullAccess()).decide("anything"))
                .isEqualTo(FileAccess.WRITE);
    }
}
