package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static dev.codeexec.sandbox.SandboxTesting.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user programs run as has a name inside the sandbox (a root JVM runs them as a user id no host account has),
 * and the account files that give it one show nothing the sandbox hid before.
 */
class SandboxAccountsIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
        assumeTrue(SandboxTesting.isRoot(), "a root JVM, whose programs run as an unprivileged user without account");
    }

    @Test
    void should_give_the_sandbox_user_a_name_and_the_workspace_home_when_programs_ask_who_they_are() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root")).build()) {
            Workspace ws = e.manager().createWorkspace("who", WorkspacePolicy.DEFAULT);
            String home = Path.of(ws.path()).resolve("home").toString();
            RunResult shell = sh(e, ws, "whoami; id -un; id -gn; echo \"$USER $LOGNAME\"; "
                    + "git -c user.email=model@example.com var GIT_COMMITTER_IDENT | cut -d'>' -f1");
            assertThat(shell.stderr()).isEmpty();
            // git takes the name from the account (without one: "unable to look up current user").
            assertThat(shell.stdout()).isEqualTo("sandbox\nsandbox\nsandbox\nsandbox sandbox\n"
                    + "codeexec sandbox user <model@example.com\n");
            RunResult py = python(e, ws, "import os, pwd, grp, getpass\n"
                    + "p = pwd.getpwuid(os.getuid())\n"
                    + "print(p.pw_name, p.pw_uid, p.pw_dir, p.pw_dir == os.environ['HOME'])\n"
                    + "print(getpass.getuser(), grp.getgrgid(os.getgid()).gr_name)\n");
            assertThat(py.stdout()).as(py.stderr())
                    .isEqualTo("sandbox " + SandboxUser.DEFAULT_UID + " " + home + " True\nsandbox sandbox\n");
        }
    }

    @Test
    void should_show_the_host_account_files_plus_one_line_and_keep_hidden_files_hidden() throws IOException {
        String hostPasswd = Files.readString(Path.of("/etc/passwd"));
        String hostGroup = Files.readString(Path.of("/etc/group"));
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root")).build()) {
            Workspace ws = e.manager().createWorkspace("files", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, ws, SandboxTesting.TRY
                    + "print(open('/etc/passwd').read(), end='')\n"
                    + "print('@@')\n"
                    + "print(open('/etc/group').read(), end='')\n"
                    + "print('@@')\n"
                    + "print('shadow', attempt(lambda: open('/etc/shadow').read()))\n"
                    + "print('write', attempt(lambda: open('/etc/passwd', 'a').write('evil:x:0:0::/:/bin/sh')))\n");
            String[] parts = r.stdout().split("@@\n");
            assertThat(parts).as(r.stderr()).hasSize(3);
            String added = parts[0].substring(Math.min(parts[0].length(), hostPasswd.length()));
            assertThat(parts[0]).startsWith(hostPasswd);
            assertThat(added).matches("sandbox:x:" + SandboxUser.DEFAULT_UID + ":" + SandboxUser.DEFAULT_GID
                    + ":[^:\n]*:" + Path.of(ws.path()).resolve("home") + ":/bin/sh\n");
            assertThat(parts[1]).startsWith(hostGroup)
                    .endsWith("sandbox:x:" + SandboxUser.DEFAULT_GID + ":\n")
                    .hasSize(hostGroup.length() + ("sandbox:x:" + SandboxUser.DEFAULT_GID + ":\n").length());
            // Still hidden, and the copies cannot be changed.
            assertThat(parts[2]).contains("shadow E").doesNotContain("shadow ok")
                    .containsPattern("write E(ACCES|ROFS)");
        }
        assertThat(Files.readString(Path.of("/etc/passwd"))).isEqualTo(hostPasswd);
    }

    @Test
    void should_add_nothing_when_the_profile_hides_the_password_file() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root"))
                .profile(PermissionProfile.workspaceWrite().withNoAccessPaths("/etc/passwd")).build()) {
            Workspace ws = e.manager().createWorkspace("hidden", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, ws, SandboxTesting.TRY
                    + "print('passwd', attempt(lambda: open('/etc/passwd').read()))\n"
                    + "print('group-has-sandbox', 'sandbox:x:' in open('/etc/group').read())\n");
            assertThat(r.stdout()).as(r.stderr()).containsPattern("passwd E(ACCES|NOENT)")
                    .contains("group-has-sandbox True");
        }
    }
}
