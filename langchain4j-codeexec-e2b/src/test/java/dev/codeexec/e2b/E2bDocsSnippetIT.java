package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The snippet of docs/e2b.md, compiled and run against the fake E2B, so it stays true. */
class E2bDocsSnippetIT {

    @Test
    void should_run_the_docs_snippet(@TempDir Path dir) throws Exception {
        FakeTesting.requirePython();
        try (FakeE2b fake = new FakeE2b(dir)) {
            String apiKey = FakeE2b.API_KEY;
            String apiUrl = fake.url();
            String sandboxUrl = fake.url();
            String user = "root";
            String baseDir = dir.toString();

            // tag::e2b[]
            try (E2bEngine engine = E2bEngine.builder()
                    .apiKey(apiKey)                                      // default: E2B_API_KEY
                    .apiUrl(apiUrl).sandboxUrl(sandboxUrl)               // self-hosted or a proxy; default: E2B's
                    .template("code-interpreter-v1")                     // the default
                    .sandboxTimeout(Duration.ofMinutes(5))               // the default; renewed while in use
                    .workspaceMode(WorkspaceMode.SANDBOX_PER_WORKSPACE)  // the default
                    .internetAccess(false)                               // the default
                    .user(user).baseDir(baseDir)                         // default: "user", /home/user/workspaces
                    .metadata(Map.of("app", "support-bot"))              // shown in E2B's dashboard
                    .build()) {
                Workspace ws = engine.manager().createWorkspace("conversation-42", WorkspacePolicy.DEFAULT);
                engine.fs().putFiles(ws, List.of(PutFile.of("work/data.csv", "a,b\n1,2\n")));
                RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("wc").args("-l", "work/data.csv")
                        .build());
                CodeExecutionResult c = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "6 * 7")));
                // r.stdout() is "2 work/data.csv\n", c.output() is "42\n"; close() kills the sandbox
                // end::e2b[]
                assertThat(r.stdout()).isEqualTo("2 work/data.csv\n");
                assertThat(c.output()).isEqualTo("42\n");
            }
            assertThat(fake.live()).isEmpty();
        }
    }
}
