package dev.codeexec.container;

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
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The disk quota per workspace with a real Docker engine and real loop-mounted volumes: a program that writes without
 * end stops at its workspace's quota; other workspaces keep their room; the engine's bookkeeping of the next run still
 * works; deleting files makes the next write work; the files survive a stopped container; nothing stays mounted.
 */
class ContainerDiskQuotaIT {

    private static final long QUOTA = 16L << 20;

    ContainerEngine engine;
    Workspace ws;

    @BeforeAll
    static void requireQuota() {
        ContainerTesting.requireDocker();
        Requirements.require("root".equals(System.getProperty("user.name")), "root (the disk quota uses loop devices)");
    }

    @BeforeEach
    void startEngine() {
        engine = ContainerTesting.engine().diskQuota(QUOTA).build();
        ws = engine.manager().createWorkspace("quota", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() {
        engine.close();
    }

    /** A shell line run in the workspace's root; the bound only stops a wedged run, it is no timing margin. */
    private RunResult sh(Workspace w, String line) {
        return engine.runner().runProgram(w, RunProgramSpec.builder("sh").args("-c", line)
                .timeout(Duration.ofSeconds(180)).build());
    }

    private static List<String> mountsWith(String name) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" ")[4])
                .filter(m -> m.contains(name)).toList();
    }

    @Test
    void should_stop_a_program_at_the_quota_and_keep_the_engine_working_until_files_are_deleted() {
        assertThat(engine.describe().diskQuota()).isTrue();

        RunResult flood = sh(ws, DiskFill.command("work/big", 64));
        assertThat(flood.stdout()).contains("No space left on device").doesNotContain("rc=0");
        // ext4 holds back room for the metadata of data not yet on disk, so a writer may stop a little short.
        assertThat(DiskFill.writtenBytes(flood)).as("what the program could write").isLessThanOrEqualTo(QUOTA)
                .isGreaterThanOrEqualTo(QUOTA / 2);

        // Full for programs, yet the next run starts: its control files are elsewhere, its folder is optional.
        RunResult echo = sh(ws, "echo still here");
        assertThat(echo.exitCode()).isZero();
        assertThat(echo.stdout()).isEqualTo("still here\n");

        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/more.bin", new byte[4 << 20]))))
                .isInstanceOf(WorkspaceFullException.class)
                .hasMessageContaining("the workspace is full: ").hasMessageContaining(" bytes used");
        assertThat(DiskFill.writtenBytes(sh(ws, "wc -c < work/big"))).isEqualTo(DiskFill.writtenBytes(flood));

        // Deleting makes room (positive control: the quota is not smaller than asked).
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

    @Test
    void should_keep_the_files_when_the_container_is_stopped_and_started_again() {
        sh(ws, "echo kept > work/note.txt");

        engine.docker().control().stopContainerCmd(engine.containerId(ws)).withTimeout(1).exec();

        assertThat(sh(ws, "cat work/note.txt").stdout()).isEqualTo("kept\n");
    }

    @Test
    void should_unmount_every_volume_when_a_workspace_is_cleaned_up_and_when_the_engine_closes() throws IOException {
        Workspace second = engine.manager().createWorkspace("second", WorkspacePolicy.DEFAULT);
        String name = engine.docker().control().inspectContainerCmd(engine.containerId(second)).exec().getName()
                .substring(1);
        String first = engine.docker().control().inspectContainerCmd(engine.containerId(ws)).exec().getName()
                .substring(1);
        assertThat(mountsWith(name)).hasSize(1);

        engine.manager().cleanup(second);
        assertThat(mountsWith(name)).isEmpty();
        assertThat(mountsWith(first)).hasSize(1);

        engine.close();
        assertThat(mountsWith(first)).isEmpty();
    }

    @Test
    void should_refuse_a_quota_where_the_docker_engine_is_not_on_this_host_and_go_without_one_otherwise() {
        URI remote = URI.create("tcp://192.0.2.1:2375");
        assertThatThrownBy(() -> ContainerVolumes.forEngine(QUOTA, remote, 1000))
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("not on this host");
        assertThat(ContainerVolumes.forEngine(null, remote, 1000)).isNull();
        assertThat(ContainerVolumes.forEngine(0L, URI.create("unix:///var/run/docker.sock"), 1000)).isNull();
        try (ContainerEngine none = ContainerTesting.engine().diskQuota(0).build()) {
            assertThat(none.describe().diskQuota()).isFalse();
            assertThatThrownBy(() -> none.manager().createWorkspace("x", new WorkspacePolicy(QUOTA)))
                    .isInstanceOf(UnsupportedCapabilityException.class);
        }
    }
}
