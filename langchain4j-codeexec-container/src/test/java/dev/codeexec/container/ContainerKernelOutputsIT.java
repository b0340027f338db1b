package dev.codeexec.container;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.tck.KernelOutputsContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The TCK's {@link KernelOutputsContract} on the container's kernel: an empty {@code out/} is seen through the kernel's
 * relay ({@link KernelOutputsFS}) without asking the Engine API, anything else is collected through the archive API
 * as before.
 */
class ContainerKernelOutputsIT implements KernelOutputsContract {

    private static ContainerEngine engine;
    private Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireKernelImage();
        engine = ContainerTesting.kernelEngine().pythonKernel(KernelOptions.defaults()).build();
    }

    @AfterAll
    static void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    @BeforeEach
    void createWorkspace() {
        ws = engine.manager().createWorkspace("kernel-outputs", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void removeWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

    @Override
    public ContainerEngine kernelEngine() {
        return engine;
    }

    @Override
    public Workspace kernelWorkspace() {
        return ws;
    }
}
