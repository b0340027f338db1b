package dev.codeexec.sandbox;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sandbox engine with a python kernel per workspace ({@code pythonKernel}, the defaults: {@code python3} on the
 * sandbox's clean PATH) under a temporary root, and one workspace, fresh for every test; real bubblewrap and ipykernel.
 */
abstract class AbstractPythonKernelIT {

    @TempDir(factory = SearchableTempDirs.class)
    Path tmp;

    SandboxEngine engine;
    Workspace ws;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @BeforeEach
    void startEngine() {
        engine = builder().build();
        ws = engine.manager().createWorkspace(getClass().getSimpleName(), WorkspacePolicy.DEFAULT);
    }

    /** The engine of every test: override to change a setting. */
    SandboxEngine.Builder builder() {
        return SandboxEngine.builder().rootDir(tmp.resolve("root")).pythonKernel(KernelOptions.defaults());
    }

    @AfterEach
    void closeEngine() {
        engine.close();
    }

    CodeExecutionResult cell(String code) {
        return cell(engine, ws, code, Duration.ofSeconds(60));
    }

    CodeExecutionResult cell(String code, Duration timeout) {
        return cell(engine, ws, code, timeout);
    }

    static CodeExecutionResult cell(SandboxEngine engine, Workspace ws, String code, Duration timeout) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, timeout));
    }
}
