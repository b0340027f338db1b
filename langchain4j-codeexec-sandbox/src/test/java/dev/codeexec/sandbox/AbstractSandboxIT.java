package dev.codeexec.sandbox;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** A default sandbox engine under a temporary root and one workspace, fresh for every test; real bubblewrap. */
abstract class AbstractSandboxIT {

    @TempDir
    Path tmp;

    SandboxEngine engine;
    Workspace ws;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @BeforeEach
    void startEngine() {
        engine = SandboxEngine.builder().rootDir(tmp.resolve("root")).build();
        ws = engine.manager().createWorkspace(getClass().getSimpleName(), WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() {
        engine.close();
    }
}
