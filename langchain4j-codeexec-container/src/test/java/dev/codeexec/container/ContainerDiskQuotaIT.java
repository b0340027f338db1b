package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.tck.DiskQuotaContractTest;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The disk quota contract with a real Docker engine and real loop-mounted volumes, and what is the container's own:
 * the files survive a stopped container, every volume is unmounted on cleanup and close, and a quota that cannot be
 * enforced (a Docker engine on another host) is refused, never ignored.
 */
class ContainerDiskQuotaIT extends DiskQuotaContractTest {

    private ContainerEngine container;

    @BeforeAll
    static void requireQuota() {
        ContainerTesting.requireDocker();
        Requirements.require("root".equals(System.getProperty("user.name")), "root (the disk quota uses loop devices)");
    }

    @Override
    protected Engine createEngine(long quota) {
        container = ContainerTesting.engine().diskQuota(quota).build();
        return container;
    }

    private static List<String> mountsWith(String name) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" ")[4])
                .filter(m -> m.contains(name)).toList();
    }

    private String containerName(Workspace w) {
        return container.docker().control().inspectContainerCmd(container.containerId(w)).exec().getName()
                .substring(1);
    }

    @Test
    void should_keep_the_files_when_the_container_is_stopped_and_started_again() {
        sh(ws, "echo kept > work/note.txt");

        container.docker().control().stopContainerCmd(container.containerId(ws)).withTimeout(1).exec();

        assertThat(sh(ws, "cat work/note.txt").stdout()).isEqualTo("kept\n");
    }

    @Test
    void should_unmount_every_volume_when_a_workspace_is_cleaned_up_and_when_the_engine_closes() throws IOException {
        Workspace second = engine.manager().createWorkspace("second", WorkspacePolicy.DEFAULT);
        String name = containerName(second);
        String first = containerName(ws);
        assertThat(mountsWith(name)).hasSize(1);

        engine.manager().cleanup(second);
        assertThat(mountsWith(name)).isEmpty();
        assertThat(mountsWith(first)).hasSize(1);

        container.close();
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
