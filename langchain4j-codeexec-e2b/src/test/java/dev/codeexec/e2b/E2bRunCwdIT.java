package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run's working directory is checked inside the run (its namespace's PID 1 resolves it and enters it): a link that
 * leaves the workspace and a file are refused with the same typed exceptions as before, before the program runs; a
 * link inside the workspace is followed (the positive control); and a program that happens to end the way a refused
 * directory does keeps its own result.
 */
class E2bRunCwdIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-cwd");
    private static E2bEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void start() {
        engine = FAKE.closing(FAKE.engine().build());
        ws = engine.manager().createWorkspace("cwd", WorkspacePolicy.DEFAULT);
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                "mkdir -p work/sub && ln -s /etc work/out-link && ln -s ../work/sub out/in-link && echo x > work/f"
                        + " && ln -s work/nowhere dangling").build());
        assertThat(r.exitCode()).as(r.stderr()).isZero();
    }

    @Test
    void should_refuse_a_cwd_through_a_link_that_leaves_the_workspace_before_the_program_runs() {
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                "touch \"$WORKSPACE_DIR/work/ran-in-escape\"").cwd("work/out-link").build()))
                .isInstanceOf(PathEscapeException.class);
        assertThat(engine.fs().stat(ws, "work/ran-in-escape")).as("the program never ran").isEmpty();
    }

    @Test
    void should_follow_a_cwd_link_inside_the_workspace() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("out/in-link").build());

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout().strip()).endsWith("/work/sub");
    }

    @Test
    void should_refuse_a_cwd_that_is_a_file_or_a_dangling_link_or_missing() {
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("work/f").build()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("work/f");
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("dangling")
                .build())).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("work/none/x")
                .build())).isInstanceOf(InvalidSpecException.class).hasMessageContaining("work/none/x");
    }

    @Test
    void should_keep_the_result_of_a_program_that_ends_as_a_refused_cwd_does() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                "echo '" + SandboxScripts.CWD_REFUSED + "' >&2; exit " + SandboxScripts.CWD_REFUSED_STATUS)
                .cwd("work").build());

        assertThat(r.exitCode()).isEqualTo(SandboxScripts.CWD_REFUSED_STATUS);
        assertThat(r.stderr()).isEqualTo(SandboxScripts.CWD_REFUSED + "\n");
    }
}
