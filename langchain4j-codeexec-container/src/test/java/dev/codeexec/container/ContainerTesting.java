package dev.codeexec.container;

import com.github.dockerjava.api.model.Container;
import dev.codeexec.testing.Requirements;
import java.util.List;
import java.util.Map;

/** What the container tests need: a Docker engine that answers and the test image on it (never pulled). */
final class ContainerTesting {

    /** The image {@code scripts/lib/provision.sh} builds from Debian packages. */
    static final String IMAGE = System.getenv().getOrDefault("CODEEXEC_TEST_IMAGE", "codeexec-python:bookworm");

    private static Boolean available;

    private ContainerTesting() {
    }

    /** Skips (or fails in strict mode) without a Docker engine and the test image. */
    static synchronized void requireDocker() {
        if (available == null) {
            try (DockerConnection d = DockerConnection.open(null, null, null)) {
                d.requireReachable();
                d.control().inspectImageCmd(IMAGE).exec();
                available = true;
            } catch (RuntimeException e) {
                available = false;
            }
        }
        Requirements.require(available, "a Docker engine with the image " + IMAGE);
    }

    static ContainerEngine.Builder engine() {
        return ContainerEngine.builder().image(IMAGE);
    }

    /** Containers labelled by the engine instance {@code engineId}. */
    static List<Container> containersOf(String engineId) {
        try (DockerConnection d = DockerConnection.open(null, null, null)) {
            return d.control().listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(ContainerWorkspaces.LABEL_ENGINE, engineId)).exec();
        }
    }
}
