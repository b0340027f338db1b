package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What the engine keeps from one run's plan to the next (see {@link HostRuleCache}, {@link AccountFiles}) never
 * outlives what it was derived from: a host secret that appears between runs is hidden from the next run on, whether
 * or not the earlier runs' resolution was kept; files kept for a workspace go with it.
 */
class SandboxPlanCacheIT extends AbstractSandboxIT {

    private final String secret = "s3cr3t-" + UUID.randomUUID();

    @Test
    void should_hide_a_host_secret_that_appears_between_runs_from_the_next_run_on() throws IOException {
        Path host = Files.createDirectories(tmp.resolve("host"));
        Files.writeString(host.resolve("public.txt"), "public");
        SandboxTesting.claimForSandbox(host);
        Path secretFile = host.resolve("secret.txt");
        String read = "import os\n"
                + "print(open('" + host.resolve("public.txt") + "').read())\n"
                + "try:\n"
                + "    print('secret:', open('" + secretFile + "').read())\n"
                + "except OSError as e:\n"
                + "    print('secret:', type(e).__name__)\n";
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root-cache"))
                .profile(PermissionProfile.workspaceWrite().withReadPaths(host.toString())
                        .withNoAccessPaths(secretFile.toString())).build()) {
            Workspace w = e.manager().createWorkspace("cache", WorkspacePolicy.DEFAULT);
            // Several runs, so that the host rules' resolution is kept (when the directories have settled).
            for (int i = 0; i < 5; i++) {
                RunResult r = python(e, w, read);
                assertThat(r.exitCode()).as(r.stderr()).isZero();
                assertThat(r.stdout()).contains("public").contains("secret: FileNotFoundError");
            }
            // Attack: the secret appears on the host between runs.
            Files.writeString(secretFile, secret);
            RunResult r = python(e, w, read);
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            assertThat(r.stdout()).doesNotContain(secret);
            // Positive control: the rest of the directory is still read in the same run.
            assertThat(r.stdout()).contains("public");
        }
    }

    @Test
    void should_write_the_account_files_once_per_workspace_and_remove_them_with_it() throws IOException {
        Path runs = tmp.resolve("root").resolve("state/runs");
        long written = -1;
        for (int i = 0; i < 3; i++) {
            RunResult r = SandboxTesting.sh(engine, ws, "id -un");
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            assertThat(r.stdout()).isNotBlank();
            if (i == 0) {
                written = accountDirs(runs);
            }
        }
        // A passwd and a group file for the workspace where the host has no entry for the sandbox user (a root JVM),
        // else none; the later runs reuse them.
        assertThat(written).isLessThanOrEqualTo(2);
        assertThat(accountDirs(runs)).isEqualTo(written);
        engine.manager().cleanup(ws);
        assertThat(accountDirs(runs)).isZero();
    }

    private static long accountDirs(Path runs) throws IOException {
        try (Stream<Path> s = Files.list(runs)) {
            return s.filter(p -> p.getFileName().toString().startsWith("accounts-")).count();
        }
    }
}
