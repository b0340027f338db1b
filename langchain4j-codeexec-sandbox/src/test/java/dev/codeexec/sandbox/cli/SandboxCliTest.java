package dev.codeexec.sandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.sandbox.FileAccess;
import dev.codeexec.sandbox.PermissionProfile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Option parsing of the command line, help and usage errors, without running anything. */
class SandboxCliTest {

    private static final Path CWD = Path.of("/srv/project");

    /** What one call of the CLI printed and returned. */
    record Outcome(int exit, String out, String err) {
    }

    private static Outcome cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = SandboxCli.run(args, o, e, Map.of(), CWD);
        }
        return new Outcome(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

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

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"--help", "-h", "--timeout 5 --help", "-h -- true", "--help --bogus", "--help -- ls"})
    void should_print_the_usage_on_stdout_and_exit_0_when_asked_for_help(String line) {
        Outcome o = cli(line.split(" "));

        assertThat(o.exit()).isZero().isEqualTo(SandboxCli.EXIT_HELP);
        assertThat(o.out()).isEqualTo(SandboxCli.USAGE + System.lineSeparator());
        assertThat(o.err()).isEmpty();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"--bogus -- true", "--bogus", "-x -- true", "--HELP -- true", "--profile=read-only -- true",
            "--bogus --help", "-hx -- true", "--timeout", "--timeout x -- true", "true", "", "-- "})
    void should_print_the_reason_and_the_usage_on_stderr_and_exit_125_when_the_command_line_is_invalid(String line) {
        Outcome o = cli(line.isEmpty() ? new String[0] : line.split(" "));

        assertThat(o.exit()).isEqualTo(SandboxCli.EXIT_SETUP).isEqualTo(125);
        assertThat(o.err()).startsWith("codeexec-sandbox: ").endsWith(SandboxCli.USAGE + System.lineSeparator());
        assertThat(o.out()).isEmpty();
    }

    @Test
    void should_say_which_option_was_wrong() {
        assertThat(cli("--bogus", "--", "true").err()).startsWith("codeexec-sandbox: unknown option --bogus\n");
        assertThat(cli("--bogus").err()).startsWith("codeexec-sandbox: unknown option --bogus\n");
        assertThat(cli("-x", "--", "true").err()).startsWith("codeexec-sandbox: unknown option -x\n");
        assertThat(cli("--profile=read-only", "--", "true").err()).startsWith("codeexec-sandbox: unknown option"
                + " --profile=read-only (give the value as the next word: --profile read-only)\n");
        assertThat(cli("--timeout").err()).startsWith("codeexec-sandbox: option --timeout needs a value\n");
        assertThat(cli("ls").err()).startsWith("codeexec-sandbox: expected an option or '--' before the command,"
                + " got 'ls'\n");
    }

    @Test
    void should_pass_help_options_after_the_separator_to_the_command() {
        // positive control: after '--' every word is the command's, '--help' and '-h' included
        SandboxCli.Options o = SandboxCli.parse(new String[] {"--timeout", "5", "--", "ls", "--help", "-h"}, CWD);

        assertThat(o.help()).isFalse();
        assertThat(o.command()).containsExactly("ls", "--help", "-h");
        assertThat(o.timeout().toSeconds()).isEqualTo(5);
        assertThat(SandboxCli.parse(new String[] {"--help"}, CWD).help()).isTrue();
    }

    @Test
    void should_document_every_option_and_exit_status_in_the_module_readme() throws IOException {
        String readme = Files.readString(Path.of("README.md"), StandardCharsets.UTF_8);
        String cli = readme.substring(readme.indexOf("## Command line"), readme.indexOf("## Tests"));
        Matcher m = Pattern.compile("(?m)^ {2}(-h, )?(--[a-z]+)").matcher(SandboxCli.USAGE);
        int options = 0;
        while (m.find()) {
            assertThat(cli).as(m.group(2)).contains(m.group(2));
            options++;
        }

        assertThat(options).isEqualTo(10);
        assertThat(cli).contains("`-h`", "**" + SandboxCli.EXIT_TIMEOUT + "**", "**" + SandboxCli.EXIT_SETUP + "**",
                "**" + SandboxCli.EXIT_HELP + "**");
        assertThat(List.of(SandboxCli.USAGE.split("\n"))).allSatisfy(l -> assertThat(l.length()).isLessThan(121));
    }
}
