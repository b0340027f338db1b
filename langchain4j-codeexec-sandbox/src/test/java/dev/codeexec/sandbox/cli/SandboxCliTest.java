package dev.codeexec.sandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.sandbox.FileAccess;
import dev.codeexec.sandbox.PermissionProfile;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Option parsing of the command line, without running anything. */
class SandboxCliTest {

    private static final Path CWD = Path.of("/srv/project");

    @Test
    void should_treat_every_glob_syntax_of_deny_as_a_workspace_glob() {
        // '{a,b}' is glob syntax (WorkspaceGlob): a workspace glob, not a host path named "x/{a,b}".
        PermissionProfile p = SandboxCli.parse(new String[] {"--deny", "x/{a,b}", "--deny", "**/.env", "--deny",
                "data/[ab].txt", "--", "true"}, CWD).profile();
        assertThat(p.noAccessGlobs()).containsExactly("x/{a,b}", "**/.env", "data/[ab].txt");
        assertThat(p.rules()).noneMatch(r -> r.path().contains("{"));
        // Positive control: a plain relative path is a host path resolved against the current directory.
        PermissionProfile plain = SandboxCli.parse(new String[] {"--deny", "x/secret.txt", "--", "true"}, CWD)
                .profile();
        assertThat(plain.noAccessGlobs()).isEmpty();
        assertThat(plain.rules()).contains(new PermissionProfile.PathRule("/srv/project/x/secret.txt",
                FileAccess.NONE));
    }
}
