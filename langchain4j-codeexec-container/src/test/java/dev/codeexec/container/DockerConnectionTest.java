package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The error of an unreachable Docker engine names the endpoint it tried and where that endpoint came from. */
class DockerConnectionTest {

    @Test
    void should_name_the_endpoint_and_its_source_when_docker_is_unreachable(@TempDir Path dir) {
        String socket = "unix://" + dir.resolve("docker.sock");
        try (DockerConnection docker = DockerConnection.open(socket, null, null, null)) {
            assertThatThrownBy(docker::requireReachable).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageStartingWith("Docker is not reachable at " + socket
                            + " (set by ContainerEngine.Builder.dockerHost): ")
                    .hasMessageContaining("start dockerd or Podman's Docker API service there, or set DOCKER_HOST");
        }
    }

    @Test
    void should_say_whether_docker_host_was_set_when_the_endpoint_is_the_default() {
        URI socket = URI.create("unix:///var/run/docker.sock");
        assertThat(DockerConnection.describe(socket, "DOCKER_HOST unset"))
                .isEqualTo("unix:///var/run/docker.sock (DOCKER_HOST unset)");
    }

    @Test
    void should_leave_credentials_and_query_out_of_the_endpoint_it_names() {
        assertThat(DockerConnection.describe(URI.create("tcp://user:secret@docker.example:2376/?token=x"),
                "from DOCKER_HOST")).isEqualTo("tcp://docker.example:2376/ (from DOCKER_HOST)");
    }
}
