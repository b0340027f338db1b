package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostWorkspaceManagerTest {

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;

    @BeforeEach
    void setUp() {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    @ParameterizedTest
    @CsvSource({
            "conv-1, conv-1",
            "../../etc, ______etc",
            "a/b c, a_b_c",
            "'', ws",
            "'   ', ws",
            "über, _ber",
    })
    void should_sanitise_execution_id_when_creating(String execId, String label) {
        Workspace ws = manager.createWorkspace(execId, WorkspacePolicy.DEFAULT);

        assertThat(ws.id()).matches("[A-Za-z0-9_-]+").startsWith(label + "-");
        assertThat(Path.of(ws.path()).getParent()).isEqualTo(manager.baseDir());
    }

    @Test
    void should_use_default_label_when_execution_id_is_null_and_cut_long_ids() {
        assertThat(manager.createWorkspace(null, null).id()).startsWith("ws-");
        assertThat(HostWorkspaceManager.label("x".repeat(100))).hasSize(40);
    }

    @Test
    void should_create_distinct_workspaces_when_id_repeats() {
        Workspace a = manager.createWorkspace("same", WorkspacePolicy.DEFAULT);
        Workspace b = manager.createWorkspace("same", WorkspacePolicy.DEFAULT);

        assertThat(a.id()).isNotEqualTo(b.id());
        assertThat(a.path()).isNotEqualTo(b.path());
    }

    @Test
    void should_create_owner_only_directories_when_creating_workspace() throws IOException {
        Workspace ws = manager.createWorkspace("m", WorkspacePolicy.DEFAULT);
        Path dir = Path.of(ws.path());

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(manager.baseDir())))
                .isEqualTo("rwx------");
        for (String d : WorkspaceLayout.DIRECTORIES) {
            assertThat(dir.resolve(d)).isDirectory();
        }
    }

    @Test
    void should_refuse_disk_limit_when_it_cannot_be_enforced() throws IOException {
        assertThatThrownBy(() -> manager.createWorkspace("d", new WorkspacePolicy(1024)))
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("maxDiskBytes");
        try (Stream<Path> s = Files.list(manager.baseDir())) {
            assertThat(s).isEmpty();
        }
    }

    @Test
    void should_do_nothing_when_cleaning_up_twice() {
        Workspace ws = manager.createWorkspace("c", WorkspacePolicy.DEFAULT);

        manager.cleanup(ws);

        assertThat(Path.of(ws.path())).doesNotExist();
        assertThatCode(() -> manager.cleanup(ws)).doesNotThrowAnyException();
    }

    @Test
    void should_remove_every_workspace_when_closed() throws IOException {
        Workspace a = manager.createWorkspace("a", WorkspacePolicy.DEFAULT);
        Workspace b = manager.createWorkspace("b", WorkspacePolicy.DEFAULT);
        Files.writeString(Path.of(b.path(), "out/x.txt"), "x");
        Files.setPosixFilePermissions(Path.of(b.path(), "out"), PosixFilePermissions.fromString("r-x------"));

        manager.close();

        assertThat(Path.of(a.path())).doesNotExist();
        assertThat(Path.of(b.path())).doesNotExist();
        assertThatCode(manager::close).doesNotThrowAnyException();
    }

    @Test
    void should_not_follow_links_when_cleaning_up() throws IOException {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("keep.txt"), "keep");
        Workspace ws = manager.createWorkspace("l", WorkspacePolicy.DEFAULT);
        Files.createSymbolicLink(Path.of(ws.path(), "work/link"), outside);

        manager.cleanup(ws);

        assertThat(outside.resolve("keep.txt")).hasContent("keep");
    }

    @Test
    void should_refuse_workspace_when_it_belongs_to_another_manager() {
        HostWorkspaceManager other = new HostWorkspaceManager(tmp.resolve("other"));
        try {
            Workspace foreign = other.createWorkspace("f", WorkspacePolicy.DEFAULT);

            assertThatThrownBy(() -> manager.hostPath(foreign)).isInstanceOf(InvalidSpecException.class)
                    .hasMessageContaining("does not belong");
            assertThatThrownBy(() -> manager.cleanup(foreign)).isInstanceOf(InvalidSpecException.class);
            assertThat(Path.of(foreign.path())).isDirectory();
        } finally {
            other.close();
        }
    }

    @Test
    void should_refuse_forged_workspace_when_path_and_id_disagree() {
        Workspace real = manager.createWorkspace("r", WorkspacePolicy.DEFAULT);

        assertThatThrownBy(() -> manager.hostPath(new Workspace("other-id", real.path())))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> manager.hostPath(new Workspace(real.id(), manager.baseDir() + "/x/../"
                + real.id() + "/..")))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> manager.hostPath(new Workspace("base", manager.baseDir().toString())))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> manager.hostPath(new Workspace("x", "/")))
                .isInstanceOf(InvalidSpecException.class);
        assertThat(Path.of(real.path())).isDirectory();
    }
}
