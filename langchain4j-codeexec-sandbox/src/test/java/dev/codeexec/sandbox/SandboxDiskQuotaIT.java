package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.tck.DiskQuotaContractTest;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk quota contract with real bubblewrap and real loop-mounted volumes, and what is the sandbox's own: every
 * volume is unmounted on cleanup and close (those of an engine that died: {@code QuotaVolumesIT},
 * {@code SandboxLifetimeIT}), and a quota the host cannot enforce is refused, never ignored.
 */
class SandboxDiskQuotaIT extends DiskQuotaContractTest {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireQuota() {
        SandboxTesting.requireSandbox();
        Requirements.require(SandboxTesting.isRoot(), "root (the disk quota uses loop devices)");
    }

    @Override
    protected Engine createEngine(long quota) {
        return SandboxEngine.builder().rootDir(tmp.resolve("root")).diskQuota(quota).build();
    }

    @Test
    void should_unmount_every_volume_when_a_workspace_is_cleaned_up_and_when_the_engine_closes() throws IOException {
        Workspace second = engine.manager().createWorkspace("second", WorkspacePolicy.DEFAULT);
        Path root = tmp.resolve("root").toRealPath();
        // Each workspace: its volume's mount in the engine's state, and the bind of its content on the workspace.
        assertThat(SandboxTesting.mountsUnder(root)).hasSize(4);

        engine.manager().cleanup(second);
        assertThat(SandboxTesting.mountsUnder(root)).hasSize(2)
                .noneMatch(m -> m.contains(second.id()));

        engine.close();
        assertThat(SandboxTesting.mountsUnder(root)).isEmpty();
    }

    @Test
    void should_refuse_a_quota_the_host_cannot_enforce_and_go_without_one_only_when_none_was_asked_for() {
        Path state = tmp.resolve("state");
        assertThatThrownBy(() -> LoopVolumes.forEngine(QUOTA, false, state))
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("disk quota");
        assertThat(LoopVolumes.forEngine(null, false, state)).isNull();
        assertThat(LoopVolumes.forEngine(0L, true, state)).isNull();
        try (SandboxEngine none = SandboxEngine.builder().rootDir(tmp.resolve("none")).diskQuota(0).build()) {
            assertThat(none.describe().diskQuota()).isFalse();
            assertThatThrownBy(() -> none.manager().createWorkspace("x", new WorkspacePolicy(QUOTA)))
                    .isInstanceOf(UnsupportedCapabilityException.class);
        }
    }
}
