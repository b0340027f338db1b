package dev.codeexec.jupyter;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The set-up of the tests that run cells in a real ipykernel, each with an engine of its own: skipped without a
 * kernel ({@link JupyterTesting#requireKernel()}); before each test the subclass's engine and one workspace in it,
 * closed after it.
 */
abstract class KernelFixture {

    private final String workspace;
    private final Supplier<JupyterEngine> engineFactory;
    JupyterEngine engine;
    Workspace ws;

    /**
     * @param workspace the name of the workspace each test gets
     * @param engineFactory builds the engine each test gets
     */
    KernelFixture(String workspace, Supplier<JupyterEngine> engineFactory) {
        this.workspace = workspace;
        this.engineFactory = engineFactory;
    }

    @BeforeAll
    static void requireKernel() {
        JupyterTesting.requireKernel();
    }

    @BeforeEach
    void startEngine() {
        engine = engineFactory.get();
        ws = engine.manager().createWorkspace(workspace, WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }
}
