package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFullException;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.DiskFill;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk quota per workspace with real bubblewrap and real loop-mounted volumes: a program that writes without end
 * stops at its workspace's quota; the host, other workspaces and the engine keep working; the engine's own
 * bookkeeping of the next run still finds room; deleting files makes the next write work; nothing stays mounted after
 * the engine (the volumes of an engine that died: {@code QuotaVolumesIT}, {@code SandboxLifetimeIT}).
 */
class SandboxDiskQuotaIT {

    private static final long QUOTA = 16L << 20;

    @TempDir
    Path tmp;

    SandboxEngine engine;
    Workspace ws;

    @BeforeAll
    static void requireQuota() {
        SandboxTesting.requireSandbox();
        Requirements.require(SandboxTesting.isRoot(), "root (the disk quota uses loop devices)");
    }

    @BeforeEach
    void startEngine() {
        engine = SandboxEngine.builder().rootDir(tmp.resolve("root")).diskQuota(QUOTA).build();
        ws = engine.manager().createWorkspace("quota", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() {
        engine.close();
    }

    /** A shell line run in the workspace's root; the bound only stops a wedged run, it is no timing margin. */
    private RunResult sh(Workspace w, String line) {
        return engine.runner().runProgram(w, RunProgramSpec.builder("/bin/sh").args("-c", line)
                .timeout(Duration.ofSeconds(180)).build());
    }

    @Test
    void should_stop_a_program_at_the_quota_and_keep_the_engine_working_until_files_are_deleted() {
        assertThat(engine.describe().diskQuota()).isTrue();

        RunResult flood = sh(ws, DiskFill.command("work/big", 64));
        assertThat(flood.stdout()).contains("No space left on device").doesNotContain("rc=0");
        // ext4 holds back room for the metadata of data not yet on disk, so a writer may stop a little short.
        assertThat(DiskFill.writtenBytes(flood)).as("what the program could write").isLessThanOrEqualTo(QUOTA)
                .isGreaterThanOrEqualTo(QUOTA / 2);

        // The workspace is full for programs, yet the engine's bookkeeping of a run (its run folder) finds room.
        RunResult echo = sh(ws, "echo still here");
        assertThat(echo.exitCode()).isZero();
        assertThat(echo.stdout()).isEqualTo("still here\n");

        // A write for the model is refused with how much is used of how much; nothing is lost.
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/more.bin", new byte[4 << 20]))))
                .isInstanceOf(WorkspaceFullException.class)
                .hasMessageContaining("the workspace is full: ").hasMessageContaining(" bytes used")
                .hasMessageContaining("delete files under work/ or out/");
        assertThat(DiskFill.writtenBytes(sh(ws, "wc -c < work/big"))).isEqualTo(DiskFill.writtenBytes(flood));

        // Deleting makes room: the same write works (positive control: the quota is not smaller than asked).
        assertThat(sh(ws, "rm work/big && echo removed").stdout()).isEqualTo("removed\n");
        engine.fs().putFiles(ws, List.of(PutFile.of("work/more.bin", new byte[1 << 20])));
        RunResult again = sh(ws, DiskFill.command("work/again", 12));
        assertThat(again.stdout()).contains("rc=0");
        assertThat(DiskFill.writtenBytes(again)).isEqualTo(12L << 20);
    }

    @Test
    void should_leave_other_workspaces_and_the_host_their_room_when_one_workspace_is_full() throws IOException {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        long hostFree = Files.getFileStore(tmp).getUsableSpace();

        sh(ws, DiskFill.command("work/big", 64));

        RunResult r = sh(other, DiskFill.command("work/fits", 8));
        assertThat(r.stdout()).contains("rc=0");
        assertThat(DiskFill.writtenBytes(r)).isEqualTo(8L << 20);
        // Two workspaces wrote at most two quotas; the host lost no more than that (other users may write too).
        assertThat(hostFree - Files.getFileStore(tmp).getUsableSpace()).isLessThan(2 * QUOTA + (64L << 20));
    }

    @Test
    void should_take_a_smaller_quota_from_the_workspace_policy() {
        Workspace small = engine.manager().createWorkspace("small", new WorkspacePolicy(4L << 20));

        RunResult over = sh(small, DiskFill.command("work/big", 8));
        RunResult under = sh(ws, DiskFill.command("work/big", 8));

        assertThat(over.stdout()).contains("No space left on device");
        assertThat(DiskFill.writtenBytes(over)).isLessThanOrEqualTo(4L << 20);
        assertThat(under.stdout()).contains("rc=0");
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
