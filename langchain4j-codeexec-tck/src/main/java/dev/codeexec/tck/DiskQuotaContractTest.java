package dev.codeexec.tck;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.WorkspaceFullException;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.tck.DiskFill;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every engine that declares {@link dev.codeexec.engine.Capabilities#diskQuota()} must do: a program that
 * writes without end stops at its workspace's quota; the engine's bookkeeping of the next run still works; a write
 * for the model that does not fit is refused with how much is used of how much; deleting files makes the next write
 * work; other workspaces keep their room; a workspace's policy can set a smaller quota. A backend's test extends this
 * with how it makes one.
 */
public abstract class DiskQuotaContractTest {

    /** The engine's quota per workspace in these tests. */
    protected static final long QUOTA = 16L << 20;

    protected Engine engine;
    protected Workspace ws;

    /** A fresh engine whose workspaces have {@code quota} bytes each; closed after the test. */
    protected abstract Engine createEngine(long quota);

    @BeforeEach
    void startEngine() {
        engine = createEngine(QUOTA);
        ws = engine.manager().createWorkspace("quota", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() throws Exception {
        engine.close();
    }

    /** A shell line run in the workspace's root; the bound only stops a wedged run, it is no timing margin. */
    protected RunResult sh(Workspace w, String line) {
        return engine.runner().runProgram(w, RunProgramSpec.builder("sh").args("-c", line)
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

        // Full for programs, yet the next run starts and its bookkeeping finds room.
        RunResult echo = sh(ws, "echo still here");
        assertThat(echo.exitCode()).isZero();
        assertThat(echo.stdout()).isEqualTo("still here\n");

        // A write for the model is refused with how much is used of how much; nothing is lost.
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/more.bin", new byte[4 << 20]))))
                .isInstanceOf(WorkspaceFullException.class)
                .hasMessageContaining("the workspace is full: ").hasMessageContaining(" bytes used")
                .hasMessageContaining("delete files under work/ or out/");
        assertThat(DiskFill.writtenBytes(sh(ws, "wc -c < work/big"))).isEqualTo(DiskFill.writtenBytes(flood));

        // Deleting makes room: the same kind of write works (positive control: the quota is not smaller than asked).
        assertThat(sh(ws, "rm work/big && echo removed").stdout()).isEqualTo("removed\n");
        engine.fs().putFiles(ws, List.of(PutFile.of("work/more.bin", new byte[1 << 20])));
        RunResult again = sh(ws, DiskFill.command("work/again", 12));
        assertThat(again.stdout()).contains("rc=0");
        assertThat(DiskFill.writtenBytes(again)).isEqualTo(12L << 20);
    }

    @Test
    void should_leave_other_workspaces_their_room_and_take_a_smaller_quota_from_the_policy() {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        Workspace small = engine.manager().createWorkspace("small", new WorkspacePolicy(4L << 20));

        sh(ws, DiskFill.command("work/big", 64));
        RunResult fits = sh(other, DiskFill.command("work/fits", 8));
        RunResult over = sh(small, DiskFill.command("work/big", 8));

        assertThat(fits.stdout()).contains("rc=0");
        assertThat(DiskFill.writtenBytes(fits)).isEqualTo(8L << 20);
        assertThat(over.stdout()).contains("No space left on device");
        assertThat(DiskFill.writtenBytes(over)).isLessThanOrEqualTo(4L << 20);
    }
}
