package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One environment for every path that starts code on the Jupyter engine: runs, sessions, and the kernel whose cells
 * read {@code os.environ}. A host variable the policy removes is absent on all three, a variable it allows present;
 * the host environment is the engine's hook, so a policy that keeps the variable shows it everywhere (the control).
 */
class JupyterEnvironmentIT {

    private static final String SECRET = "fake-secret-51d0";
    private static final String CELL = "import os\nprint(os.environ.get('AWS_SECRET_ACCESS_KEY'), "
            + "os.environ.get('CODEEXEC_ALLOWED'))";

    @BeforeAll
    static void requireKernel() {
        JupyterTesting.requireKernel();
    }

    @Test
    void should_keep_a_removed_variable_out_of_runs_sessions_and_cells_when_the_policy_removes_it() {
        ShellEnvironmentPolicy policy = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .build(); // the default excludes drop names with SECRET, KEY, TOKEN, …
        try (JupyterEngine engine = JupyterEngine.builder().hostEnvironment(host()).environmentPolicy(policy)
                .build()) {
            Workspace ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);

            assertThat(engine.runner().runProgram(ws, env()).stdout()).doesNotContain(SECRET)
                    .contains("CODEEXEC_ALLOWED=visible-42");
            assertThat(session(engine, ws)).doesNotContain(SECRET).contains("CODEEXEC_ALLOWED=visible-42");
            assertThat(cell(engine, ws, CELL).output()).isEqualTo("None visible-42\n");
        }
    }

    @Test
    void should_show_the_variable_in_runs_sessions_and_cells_when_the_policy_keeps_it() {
        try (JupyterEngine engine = JupyterEngine.builder().hostEnvironment(host())
                .environmentPolicy(ShellEnvironmentPolicy.inheritAll()).build()) {
            Workspace ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);

            assertThat(engine.runner().runProgram(ws, env()).stdout()).contains("AWS_SECRET_ACCESS_KEY=" + SECRET);
            assertThat(session(engine, ws)).contains("AWS_SECRET_ACCESS_KEY=" + SECRET);
            assertThat(cell(engine, ws, CELL).output()).isEqualTo(SECRET + " visible-42\n");
        }
    }

    /** The JVM's environment (for the kernel's Python on PATH) plus a fake credential and an ordinary variable. */
    private static Map<String, String> host() {
        Map<String, String> host = new HashMap<>(System.getenv());
        host.put("AWS_SECRET_ACCESS_KEY", SECRET);
        host.put("CODEEXEC_ALLOWED", "visible-42");
        return host;
    }

    private static RunProgramSpec env() {
        return RunProgramSpec.builder("env").timeout(Duration.ofSeconds(30)).build();
    }

    private static String session(JupyterEngine engine, Workspace ws) {
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, env())) {
            ProgramPoll p = s.await(Duration.ofSeconds(30), 0, 1 << 16);
            assertThat(p.running()).isFalse();
            return p.output();
        }
    }
}
