package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets in the host environment do not reach a program: not in its own environment, not in any process's
 * {@code /proc/N/environ} (bubblewrap's reaper, PID 1, shows the environment bubblewrap was started with), not on a
 * command line. Controls: explicitly passed variables and core variables arrive.
 */
class SandboxEnvironmentIT {

    @TempDir
    Path tmp;

    private final String secret = "sk-" + UUID.randomUUID();

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    private Map<String, String> hostEnv() {
        return Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "LANG", "C.UTF-8", "OPENAI_API_KEY", secret,
                "AWS_SECRET_ACCESS_KEY", secret, "GITHUB_TOKEN", secret, "DB_PASSWORD", secret,
                "SOME_SERVICE_URL", "https://user:" + secret + "@db", "HOME", "/root");
    }

    private static final String SCAN = SandboxTesting.TRY
            + "import glob\n"
            + "blob = ''\n"
            + "for f in glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/cmdline'):\n"
            + "    try:\n"
            + "        blob += open(f, 'rb').read().decode('utf-8', 'replace')\n"
            + "    except OSError:\n"
            + "        pass\n"
            + "print('pid1-readable', attempt(lambda: open('/proc/1/environ', 'rb').read()))\n"
            + "print('SCAN', blob)\n"
            + "print('ENV', dict(os.environ))\n";

    @Test
    void should_not_leak_host_secrets_with_default_policy() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root")).hostEnvironment(hostEnv())
                .build()) {
            Workspace ws = e.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, ws, SCAN);
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            assertThat(r.stdout()).doesNotContain(secret).doesNotContain("OPENAI_API_KEY")
                    .doesNotContain("SOME_SERVICE_URL");
            // Controls: /proc/1/environ was really read; core variables arrive, HOME points into the workspace.
            assertThat(r.stdout()).contains("pid1-readable ok").contains("'LANG': 'C.UTF-8'")
                    .contains("'HOME': '" + ws.path() + "/home'");
        }
    }

    @Test
    void should_drop_credential_names_even_when_inheriting_everything() {
        ShellEnvironmentPolicy all = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .exclude("*_URL").build();
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root")).hostEnvironment(hostEnv())
                .environmentPolicy(all).build()) {
            Workspace ws = e.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, ws, SCAN);
            assertThat(r.stdout()).doesNotContain(secret);
            // Control: an explicitly passed secret is the caller's decision and arrives.
            RunResult passed = e.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh")
                    .args("-c", "echo $OPENAI_API_KEY").env("OPENAI_API_KEY", "explicit-value").build());
            assertThat(passed.stdout()).isEqualTo("explicit-value\n");
        }
    }

    @Test
    void should_honour_clean_env() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root")).hostEnvironment(hostEnv())
                .environmentPolicy(ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                        .set("FROM_POLICY", "1").build()).build()) {
            Workspace ws = e.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);
            RunResult r = e.runner().runProgram(ws, RunProgramSpec.builder("env").cleanEnv(true)
                    .env("ONLY", "this").build());
            assertThat(r.stdout()).doesNotContain(secret).doesNotContain("FROM_POLICY").contains("ONLY=this")
                    .contains("WORKSPACE_DIR=").contains("PATH=");
            assertThat(e.describe().supportsCleanEnv()).isTrue();
        }
    }
}
