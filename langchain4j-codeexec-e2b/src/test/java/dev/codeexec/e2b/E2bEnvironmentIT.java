package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs, sessions and python cells take their environment from the engine's one environment policy: a host variable
 * the policy removes reaches none of them; a host variable it keeps and one it sets reach all three (the positive
 * controls). The fake's sandboxes and kernels start from the VM's environment, never this JVM's.
 */
class E2bEnvironmentIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-env");
    private static E2bEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void start() throws Exception {
        engine = FAKE.closing(FAKE.engine()
                .environmentPolicy(ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                        .set("CODEEXEC_SET", "set-by-policy").build())
                .hostEnvironment(Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH, "DEPLOY_TOKEN", "host-secret",
                        "CODEEXEC_KEPT", "kept-from-host"))
                .build());
        ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);
    }

    private static void assertPolicyEnvironment(String env, String where) {
        assertThat(env).as(where + ": a variable the policy removes").doesNotContain("DEPLOY_TOKEN")
                .doesNotContain("host-secret");
        assertThat(env).as(where + ": variables the policy keeps and sets").contains("CODEEXEC_KEPT=kept-from-host")
                .contains("CODEEXEC_SET=set-by-policy");
    }

    @Test
    void should_give_a_run_the_policys_environment() {
        String env = engine.runner().runProgram(ws, RunProgramSpec.builder("env").build()).stdout();

        assertPolicyEnvironment(env, "run");
    }

    @Test
    void should_give_a_session_the_policys_environment() {
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("env")
                .timeout(Duration.ofMinutes(2)).build())) {
            ProgramPoll p = s.await(Duration.ofMinutes(2), 0, 1 << 20);

            assertPolicyEnvironment(p.output(), "session");
        }
    }

    @Test
    void should_give_a_python_cell_the_policys_environment() {
        String out = engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python",
                "import os\nprint('\\n'.join(k + '=' + v for k, v in sorted(os.environ.items())))")), null,
                Duration.ofSeconds(60))).output();

        assertPolicyEnvironment(out, "cell");
    }
}
