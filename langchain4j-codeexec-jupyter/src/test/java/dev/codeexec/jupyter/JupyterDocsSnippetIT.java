package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snippet of docs/jupyter.md, compiled and run, so it stays true. */
class JupyterDocsSnippetIT {

    @Test
    void should_run_the_docs_snippet(@TempDir Path workspaces) {
        JupyterTesting.requireKernel();
        String python = JupyterTesting.kernelPython();

        // tag::jupyter[]
        try (JupyterEngine engine = JupyterEngine.builder()
                .rootDir(workspaces)                          // default: a temporary directory, removed on close()
                .python(python)                               // default: the first python3 that imports ipykernel
                .kernelStartTimeout(Duration.ofSeconds(30))   // the default
                .interruptGrace(Duration.ofSeconds(5))        // the default
                .build()) {
            Workspace ws = engine.manager().createWorkspace("analysis", WorkspacePolicy.DEFAULT);
            engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "import statistics\nxs = [3, 5, 10]")));
            CodeExecutionResult r = engine.executeCode(ws, CodeExecutionInput.of(
                    CodeBlock.of("python", "statistics.mean(xs)")));
            // r.output() is "6\n": the kernel kept xs; r.outputFiles() lists out/, displays included
            // end::jupyter[]
            assertThat(r.output()).isEqualTo("6\n");
            assertThat(r.exitCode()).isZero();
        }
    }
}
