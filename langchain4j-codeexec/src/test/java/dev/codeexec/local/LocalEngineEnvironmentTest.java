package dev.codeexec.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One environment for every path that starts code: a host variable the engine's policy removes is absent in a run, a
 * session and a code block, and a variable it allows is present (a code block asks for a clean environment, so it
 * gets neither). The host environment is the engine's hook ({@code hostEnvironment}), not the JVM's.
 */
class LocalEngineEnvironmentTest {

    static final String SECRET = "fake-secret-7c1e";
    static final Map<String, String> HOST = Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH,
            "AWS_SECRET_ACCESS_KEY", SECRET, "CODEEXEC_ALLOWED", "visible-42");
    /** Inherits everything the host has, minus the default excludes (names with SECRET, KEY, TOKEN, …). */
    static final ShellEnvironmentPolicy POLICY = ShellEnvironmentPolicy.builder()
            .inherit(ShellEnvironmentPolicy.Inherit.ALL).build();

    @TempDir
    Path tmp;

    @Test
    void should_keep_a_removed_variable_out_of_runs_sessions_and_code_blocks_when_the_policy_removes_it() {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("base")).hostEnvironment(HOST)
                .environmentPolicy(POLICY).build()) {
            Workspace ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);

            String run = engine.runner().runProgram(ws, env()).stdout();
            String session = sessionOutput(engine, ws);
            String block = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("bash", "env"))).output();

            assertThat(run).doesNotContain(SECRET).doesNotContain("AWS_SECRET_ACCESS_KEY")
                    .contains("CODEEXEC_ALLOWED=visible-42");
            assertThat(session).doesNotContain(SECRET).contains("CODEEXEC_ALLOWED=visible-42");
            assertThat(block).doesNotContain(SECRET).contains("WORKSPACE_DIR=");
        }
    }

    @Test
    void should_show_the_host_variable_on_every_path_when_the_policy_allows_it() {
        // The control: the variable comes from the engine's hook, so a policy that keeps it shows it everywhere.
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("base")).hostEnvironment(HOST)
                .environmentPolicy(ShellEnvironmentPolicy.inheritAll()).build()) {
            Workspace ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);

            assertThat(engine.runner().runProgram(ws, env()).stdout()).contains("AWS_SECRET_ACCESS_KEY=" + SECRET);
            assertThat(sessionOutput(engine, ws)).contains("AWS_SECRET_ACCESS_KEY=" + SECRET);
        }
    }

    private static RunProgramSpec env() {
        return RunProgramSpec.builder("env").timeout(Duration.ofSeconds(30)).build();
    }

    private static String sessionOutput(LocalEngine engine, Workspace ws) {
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, env())) {
            ProgramPoll p = s.await(Duration.ofSeconds(30), 0, 1 << 16);
            assertThat(p.running()).isFalse();
            return p.output();
        }
    }
}
