package dev.codeexec.langchain4j;

import dev.codeexec.tck.AbstractWorkspaceIOIT;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Engine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The application facade and the CodeExecutionEngine adapter on the local engine. */
class WorkspaceIOIT extends AbstractWorkspaceIOIT {

    @BeforeAll
    static void requirePython() {
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return LocalEngine.builder().inputRoots(List.of(inputs)).artifactService(artifacts).build();
    }

    // The builder's validation does not depend on the backend: checked once, here.
    @Test
    void should_reject_bad_builder_settings_with_named_values() {
        assertThatThrownBy(() -> CodeExecution.builder().build()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("engine must be set");
        assertThatThrownBy(() -> CodeExecution.builder().engine(engine).defaultTimeout(Duration.ofMinutes(20)).build())
                .hasMessageContaining("must not exceed maxTimeout");
        assertThatThrownBy(() -> CodeExecution.builder().toolName(WorkspaceTool.EXEC, "bad name"))
                .hasMessageContaining("(bad name) must match");
        assertThatThrownBy(() -> CodeExecution.builder().engine(engine).toolName(WorkspaceTool.EXEC, "execute_code")
                .build()).hasMessageContaining("distinct");
        assertThatThrownBy(() -> CodeExecution.builder().engine(engine).maxWriteBytes(0).build())
                .hasMessageContaining("maxWriteBytes (0) must be positive");
    }
}
