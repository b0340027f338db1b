package dev.codeexec.container;

import com.github.dockerjava.api.model.Container;
import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.testing.Requirements;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the container tests need: a Docker engine that answers and the test image on it (never pulled); the Python
 * kernel tests need the kernel image too.
 */
final class ContainerTesting {

    /** The image {@code scripts/lib/provision.sh} builds from Debian packages. */
    static final String IMAGE = System.getenv().getOrDefault("CODEEXEC_TEST_IMAGE", "codeexec-python:bookworm");

    /** The image with ipykernel that {@code scripts/lib/provision.sh} builds for the Python kernel tests. */
    static final String KERNEL_IMAGE = System.getenv().getOrDefault("CODEEXEC_KERNEL_IMAGE",
            "codeexec-python-kernel:bookworm");

    private static Boolean available;
    private static Boolean kernelImage;

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

    /**
     * Skips (or fails in strict mode) without a Docker engine and the kernel image, which {@code scripts/provision
     * docker} builds ({@code scripts/lib/provision.sh}: Debian's python3-ipykernel).
     */
    static synchronized void requireKernelImage() {
        requireDocker();
        if (kernelImage == null) {
            try (DockerConnection d = DockerConnection.open(null, null, null)) {
                d.control().inspectImageCmd(KERNEL_IMAGE).exec();
                kernelImage = true;
            } catch (RuntimeException e) {
                kernelImage = false;
            }
        }
        Requirements.require(kernelImage, "the Docker image " + KERNEL_IMAGE + " with ipykernel (built by "
                + "scripts/provision docker, see scripts/lib/provision.sh)");
    }

    /** An engine on the kernel image, otherwise as {@link #engine()}. */
    static ContainerEngine.Builder kernelEngine() {
        return engine().image(KERNEL_IMAGE);
    }

    /** An engine on the test image; {@code CODEEXEC_CONTAINER_RUNTIME} picks another OCI runtime (runsc),
     * {@code CODEEXEC_CONTAINER_RLIMITS} ({@code openFiles:processes}) sets the containers' rlimits. */
    static ContainerEngine.Builder engine() {
        ContainerEngine.Builder b = ContainerEngine.builder().image(IMAGE);
        String runtime = System.getenv("CODEEXEC_CONTAINER_RUNTIME");
        if (runtime != null && !runtime.isBlank()) {
            b.runtime(runtime);
        }
        // "openFiles:processes", for Podman on a host whose hard limits are below Podman's defaults.
        String rlimits = System.getenv("CODEEXEC_CONTAINER_RLIMITS");
        if (rlimits != null && rlimits.contains(":")) {
            String[] r = rlimits.split(":");
            b.containerRlimits(Long.parseLong(r[0]), Long.parseLong(r[1]));
        }
        return b;
    }

    /** Runs {@code code} as one python block in {@code ws}: a cell when the engine has a Python kernel. */
    static CodeExecutionResult cell(ContainerEngine engine, Workspace ws, String code, Duration timeout) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, timeout));
    }

    /** Containers labelled by the engine instance {@code engineId}. */
    static List<Container> containersOf(String engineId) {
        try (DockerConnection d = DockerConnection.open(null, null, null)) {
            return d.control().listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(ContainerWorkspaces.LABEL_ENGINE, engineId)).exec();
        }
    }
}
