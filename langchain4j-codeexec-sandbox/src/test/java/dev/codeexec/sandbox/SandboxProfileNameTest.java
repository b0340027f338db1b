package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's log names the profile as the documentation writes it, not by its enforcement mode. */
class SandboxProfileNameTest {

    @TempDir
    java.nio.file.Path tmp;

    @Test
    void should_name_the_preset_whatever_its_network() {
        assertThat(SandboxEngine.profileName(PermissionProfile.workspaceWrite())).isEqualTo("workspaceWrite()");
        assertThat(SandboxEngine.profileName(PermissionProfile.workspaceWrite().withNetwork(NetworkMode.ENABLED)))
                .isEqualTo("workspaceWrite()");
        assertThat(SandboxEngine.profileName(PermissionProfile.readOnly())).isEqualTo("readOnly()");
        assertThat(SandboxEngine.profileName(PermissionProfile.dangerFullAccess())).isEqualTo("dangerFullAccess()");
        assertThat(SandboxEngine.profileName(PermissionProfile.external(NetworkMode.RESTRICTED)))
                .isEqualTo("external(" + NetworkMode.RESTRICTED.id() + ")");
    }

    @Test
    void should_call_a_changed_preset_custom_and_count_its_rules() {
        PermissionProfile p = PermissionProfile.workspaceWrite().withReadPaths(tmp.toString());

        assertThat(SandboxEngine.profileName(p)).isEqualTo("custom (" + p.rules().size() + " path rules)")
                .doesNotContain("MANAGED");
    }
}
