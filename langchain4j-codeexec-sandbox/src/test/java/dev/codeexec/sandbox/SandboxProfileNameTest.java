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
        assertThat(EngineProfile.name(PermissionProfile.workspaceWrite())).isEqualTo("workspaceWrite()");
        assertThat(EngineProfile.name(PermissionProfile.workspaceWrite().withNetwork(NetworkMode.ENABLED)))
                .isEqualTo("workspaceWrite()");
        assertThat(EngineProfile.name(PermissionProfile.readOnly())).isEqualTo("readOnly()");
        assertThat(EngineProfile.name(PermissionProfile.dangerFullAccess())).isEqualTo("dangerFullAccess()");
        assertThat(EngineProfile.name(PermissionProfile.external(NetworkMode.RESTRICTED)))
                .isEqualTo("external(" + NetworkMode.RESTRICTED.id() + ")");
    }

    @Test
    void should_call_a_changed_preset_custom_and_count_its_rules() {
        PermissionProfile p = PermissionProfile.workspaceWrite().withReadPaths(tmp.toString());

        assertThat(EngineProfile.name(p)).isEqualTo("custom (" + p.rules().size() + " path rules)")
                .doesNotContain("MANAGED");
    }
}
