package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.langchain4j.invocation.InvocationContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model's file tools obey the rules programs in the sandbox do: they cannot create or change a repository's
 * configuration (its hooks and {@code core.fsmonitor} run on the host when the application uses git there), nor write
 * into a directory staged read-only. The application's own writes stay trusted.
 */
class SandboxModelWritesIT {

    @TempDir
    Path tmp;

    private SandboxEngine engine;
    private CodeExecution codeExec;
    private WorkspaceTools tools;
    private final InvocationContext ctx = InvocationContext.builder().chatMemoryId("model").build();

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @BeforeEach
    void start() throws IOException {
        Path skill = Files.createDirectories(tmp.resolve("inputs/skill"));
        Files.writeString(skill.resolve("SKILL.md"), "instructions");
        engine = SandboxEngine.builder().rootDir(tmp.resolve("root")).inputRoots(List.of(tmp.resolve("inputs")))
                .artifactService(FileSystemArtifactService.at(tmp.resolve("artifacts"))).build();
        codeExec = CodeExecution.builder().engine(engine).build();
        tools = codeExec.tools();
    }

    @AfterEach
    void stop() {
        codeExec.close();
        engine.close();
    }

    private String exec(String command) {
        return tools.workspaceExec(command, null, null, null, null, null, ctx);
    }

    @Test
    void should_refuse_model_writes_into_repository_metadata_that_programs_cannot_write() {
        String fsmonitor = "[core]\n\tfsmonitor = touch /tmp/pwned\n";
        // Programs cannot create the root repository's configuration.
        assertThat(exec("mkdir -p \"$WORKSPACE_DIR/.git\" && echo x > \"$WORKSPACE_DIR/.git/config\" && echo wrote"))
                .doesNotContain("wrote");

        // Nor can the model, through either file tool.
        assertThat(tools.workspaceWriteFile(".git/config", fsmonitor, null, ctx))
                .startsWith("error:").contains("'.git' is protected metadata").contains("Nothing was run");
        assertThat(tools.workspaceWriteFile(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n", null, ctx))
                .startsWith("error:").contains("protected metadata");
        // A repository a program created below the top is protected from the next run on: for the model too.
        assertThat(exec("cd \"$WORK_DIR\" && mkdir -p sub/.git && echo '[core]' > sub/.git/config && echo created"))
                .contains("created");
        assertThat(exec("echo x >> \"$WORK_DIR/sub/.git/config\" && echo wrote")).doesNotContain("wrote");
        assertThat(tools.workspaceWriteFile("work/sub/.git/config", fsmonitor, true, ctx))
                .startsWith("error:").contains("'work/sub/.git' is protected metadata");
        assertThat(tools.workspaceWriteFile("work/note.txt", fsmonitor, null, ctx)).startsWith("created");
        assertThat(tools.workspaceSaveArtifact("work/note.txt", "cfg", ctx)).doesNotStartWith("error:");
        assertThat(tools.workspaceStageArtifact("artifact://cfg", "work/sub/.git/config", ctx))
                .startsWith("error:").contains("protected metadata");

        WorkspaceIO io = codeExec.workspace("model");
        assertThat(exec("cat \"$WORKSPACE_DIR/.git/config\" 2>&1; echo end")).doesNotContain("fsmonitor")
                .endsWith("end");
        assertThat(io.read("work/sub/.git/config", 0, 100).contentAsString()).isEqualTo("[core]\n");
    }

    @Test
    void should_let_the_model_write_where_programs_can_and_the_application_write_metadata() {
        assertThat(tools.workspaceWriteFile("work/x.txt", "x", null, ctx)).startsWith("created work/x.txt");
        // A name that merely contains a protected one, and a repository a program could still create.
        assertThat(tools.workspaceWriteFile("work/.gitignore", "*.tmp\n", null, ctx)).startsWith("created");
        assertThat(tools.workspaceWriteFile("work/new/.git/description", "d", null, ctx)).startsWith("created");
        assertThat(tools.workspaceSaveArtifact("work/x.txt", "x", ctx)).doesNotStartWith("error:");
        assertThat(tools.workspaceStageArtifact("artifact://x", "work/inputs/x.txt", ctx))
                .startsWith("staged");
        // The application's own writes stay trusted: it may stage a repository.
        WorkspaceIO io = codeExec.workspace("model");
        io.putFile(".git/config", "[core]\n");
        assertThat(io.read(".git/config", 0, 100).contentAsString()).isEqualTo("[core]\n");
    }

    @Test
    void should_refuse_model_writes_into_a_directory_staged_read_only() {
        Workspace ws = engine.manager().createWorkspace("staged", WorkspacePolicy.DEFAULT);
        engine.fs().stageDirectory(ws, tmp.resolve("inputs/skill"), "skills/demo", new StageOptions(true, false));
        assertThat(SandboxTesting.sh(engine, ws, "echo x > \"$SKILLS_DIR/demo/SKILL.md\" && echo wrote").stdout())
                .doesNotContain("wrote");
        assertThatThrownBy(() -> engine.fs().checkWritableByPrograms(ws, "skills/demo/SKILL.md"))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("read-only for programs");
        // Positive control: beside the stage, and the application's own write into it.
        engine.fs().checkWritableByPrograms(ws, "skills/other.md");
        engine.fs().putFiles(ws, List.of(PutFile.of("skills/demo/extra.md", "x")));
        assertThat(engine.fs().readFile(ws, "skills/demo/extra.md", 0, 10).contentAsString()).isEqualTo("x");
    }
}
