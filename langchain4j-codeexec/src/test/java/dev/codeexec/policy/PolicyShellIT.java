package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Policy output run by real shells: the rendered script gives the program exactly the checked argv, a checked and
 * resolved pipeline runs in a clean environment, and each argument validator refuses an attack that really works when
 * it is not checked (proved by running it unchecked first) while the everyday use next to it runs.
 */
class PolicyShellIT {

    private static final String CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin";

    @TempDir
    Path dir;

    record Run(int exit, String stdout, String stderr) {
    }

    private Run run(Path cwd, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", CLEAN_PATH);
        pb.environment().put("HOME", cwd.toString());
        pb.environment().put("LANG", "C.UTF-8");
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(
                Path.of("/dev/null").toFile()));
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    // ---------------------------------------------------------------- rendering fidelity

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"/bin/sh", "/bin/bash"})
    void should_give_the_program_exactly_the_checked_words_when_a_shell_runs_the_rendering(String shell)
            throws Exception {
        Requirements.require(Files.isExecutable(Path.of(shell)), shell);
        List<String> words = List.of("plain", "", "with space", "it's", "\"dq\"", "$HOME", "$(id)", "`id`", "~",
                "~/x", "a=~/x", "*", "?", "[a]", "{a,b}", "{1..3}", "!1", "#c", "a;b", "a|b", "a&b", "<x>", "\\",
                "\\n", "tab\there", "line\nbreak", "你好", "😀", "-n", "--x=y", "%1", "'", "''", "'\\''");
        List<String> argv = new ArrayList<>();
        argv.add("/usr/bin/printf");
        argv.add("%s\\0");
        argv.addAll(words);
        ParsedCommand cmd = new ParsedCommand("test", List.of(new ParsedCommand.Segment(argv)), List.of());

        Run r = run(dir, shell, "-c", cmd.toShellScript());

        assertThat(r.exit()).as(r.stderr()).isZero();
        List<String> printed = List.of(r.stdout().split("\0", -1));
        assertThat(printed.subList(0, printed.size() - 1)).isEqualTo(words);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"/bin/sh", "/bin/bash"})
    void should_run_a_checked_resolved_pipeline_in_a_clean_environment(String shell) throws Exception {
        Requirements.require(Files.isExecutable(Path.of(shell)), shell);
        CommandPolicy policy = CommandPolicy.allowing("echo", "wc");

        ParsedCommand cmd = policy.check("echo hello world | wc -w", CLEAN_PATH);
        Run r = run(dir, shell, "-c", cmd.toShellScript());

        assertThat(cmd.commands()).allSatisfy(c -> assertThat(c).startsWith("/"));
        assertThat(r.exit()).isZero();
        assertThat(r.stdout().strip()).isEqualTo("2");
        assertThatThrownBy(() -> policy.check("echo hello | curl http://example.com"))
                .hasMessageContaining("'curl' is not in the policy's allow list");
    }

    @Test
    void should_run_the_binary_not_a_planted_file_when_a_bare_name_was_resolved() throws Exception {
        Requirements.require(Files.isExecutable(Path.of("/bin/sh")), "/bin/sh");
        // The attack: after the check, the model plants a 'cat' in a directory the shell would search first.
        Files.writeString(dir.resolve("f.txt"), "safe\n");
        ParsedCommand cmd = CommandPolicy.allowing("cat").check("cat f.txt", CLEAN_PATH);
        Path planted = dir.resolve("bin/cat");
        Files.createDirectories(planted.getParent());
        Files.writeString(planted, "#!/bin/sh\necho PLANTED\n");
        assertThat(planted.toFile().setExecutable(true)).isTrue();
        String prefix = "PATH=" + planted.getParent() + ":$PATH; ";

        Run r = run(dir, "/bin/sh", "-c", prefix + cmd.toShellScript());
        // positive control: the unresolved bare name is shadowed by the planted file
        Run shadowed = run(dir, "/bin/sh", "-c", prefix + "cat f.txt");

        assertThat(r.stdout().strip()).isEqualTo("safe");
        assertThat(shadowed.stdout().strip()).isEqualTo("PLANTED");
    }

    // ---------------------------------------------------------------- validators against real tools

    static Stream<Arguments> attacks() {
        return Stream.of(
                arguments("find", "find . -maxdepth 0 -exec touch PWNED \\;", "find . -maxdepth 1 -name in.txt"),
                arguments("awk", "awk 'BEGIN{system(\"touch PWNED\")}'", "awk -F, '{print $2}' in.txt"),
                arguments("awk", "awk 'BEGIN{print \"x\" | \"touch PWNED\"}'", "awk 'NR < 2' in.txt"),
                arguments("sed", "sed -n '1e touch PWNED' in.txt", "sed -n 's/a/b/p' in.txt"),
                arguments("sed", "sed -n 's/.*/touch PWNED/e' in.txt", "sed 's/[/]/x/' in.txt"),
                arguments("tar", "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch PWNED' in.txt",
                        "tar -cf a.tar --checkpoint=1 in.txt"),
                arguments("tar", "tar -cf a.tar --use-compress-program='sh -c \"touch PWNED; cat\"' in.txt",
                        "tar -czf a.tgz in.txt"),
                arguments("git", "git -c alias.x='!touch PWNED' x", "git -c user.name=x --version"),
                arguments("python3", "python3 -c 'open(\"PWNED\", \"w\")'", "python3 script.py"),
                // sort runs its compress program on the temporary files: here sh, fed lines of "touch PWNED"
                arguments("sort", "sort -S 16K --compress-program=sh lines.txt",
                        "sort -S 16K -o sorted.txt lines.txt"),
                arguments("sort", "sort -S 16K --compress-prog=sh lines.txt", "sort -n in.txt"),
                arguments("sort", "sort -S 16K --compress=sh lines.txt", "sort -u -t, -k2 in.txt"),
                // long options abbreviated as getopt_long and git's parse-options accept them
                arguments("tar", "tar -cf a.tar --checkpoint=1 --checkpoint-a=exec='touch PWNED' in.txt",
                        "tar -cf a.tar --checkpoint=1 in.txt"),
                arguments("tar", "tar -cf a.tar --use-compress='sh -c \"touch PWNED; cat\"' in.txt",
                        "tar -cf a.tar in.txt"),
                arguments("git", "git diff --no-index --output=PWNED in.txt script.py",
                        "git diff --no-index in.txt in.txt"),
                // .gitconfig (HOME is the run's folder) names the editor, as a model that writes files could
                arguments("git", "git config --global --ed", "git config --global --get core.editor"),
                arguments("split", "split -l 1 --filter='touch PWNED' in.txt", "split -l 1 in.txt part-"),
                arguments("split", "split -l 1 --filt='touch PWNED' in.txt", "split -n 2 in.txt part-"),
                // perl reads -l's digits and goes on reading switches: -lne is -l -n -e
                arguments("perl", "perl -e 'open(my $f, \">\", \"PWNED\")'", "perl script.pl"),
                arguments("perl", "perl -lne 'BEGIN { open(my $f, \">\", \"PWNED\") }' in.txt",
                        "perl -ln script.pl in.txt"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("attacks")
    void should_refuse_an_attack_that_works_unchecked_and_run_the_control(String tool, String attack,
                                                                          String control) throws Exception {
        Requirements.require(Files.isExecutable(Path.of("/bin/sh")), "/bin/sh");
        Requirements.requireCommand(tool);
        if (tool.equals("sed") || tool.equals("tar") || tool.equals("sort") || tool.equals("split")) {
            Run version = run(dir, tool, "--version");
            Requirements.require(version.stdout().contains("GNU"), "GNU " + tool);
        }
        Path attackDir = Files.createDirectories(dir.resolve("attack"));
        Path controlDir = Files.createDirectories(dir.resolve("control"));
        for (Path d : List.of(attackDir, controlDir)) {
            Files.writeString(d.resolve("in.txt"), "a,1\nb/2,3\n", StandardCharsets.UTF_8);
            Files.writeString(d.resolve("script.py"), "print('ok')\n");
            Files.writeString(d.resolve("script.pl"), "print \"ok\\n\";\n");
            // more than sort's 16K buffer, so it compresses temporary files; the compress program (sh) runs every line,
            // so most lines are comments: 5,000 touches took over 30 s on a loaded machine, this takes well under one
            Files.writeString(d.resolve("lines.txt"), "touch PWNED\n".repeat(8) + ("#" + "x".repeat(60) + "\n")
                    .repeat(1000));
            Files.writeString(d.resolve(".gitconfig"), "[core]\n\teditor = touch PWNED\n");
        }
        CommandPolicy policy = CommandPolicy.allowing(tool);

        // The attack is real: run unchecked, it creates the marker. It runs in a PID namespace of its own, so that no
        // straggler (sort's compress programs, say) still writes into the directory when the test cleans up.
        List<String> argv = new java.util.ArrayList<>(List.of("/usr/bin/unshare", "--pid", "--fork", "--kill-child"));
        if (!System.getProperty("user.name").equals("root")) {
            argv.add("--map-current-user");
        }
        argv.addAll(List.of("--", "/bin/sh", "-c", attack));
        Run unchecked = run(attackDir, argv.toArray(String[]::new));
        assertThat(attackDir.resolve("PWNED")).as("unchecked run: " + unchecked).exists();

        // The policy refuses it.
        assertThatThrownBy(() -> policy.check(attack)).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("argument validator");

        // The everyday use passes and runs.
        ParsedCommand ok = policy.check(control, CLEAN_PATH);
        Run controlled = run(controlDir, "/bin/sh", "-c", ok.toShellScript());
        assertThat(controlled.exit()).as(controlled.stderr()).isZero();
        assertThat(controlDir.resolve("PWNED")).doesNotExist();
    }

    // ---------------------------------------------------------------- wrappers around a denied command

    /** The glibc dynamic loader of this host, or null. */
    private static String loader() {
        for (String l : List.of("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")) {
            if (Files.exists(Path.of(l))) {
                return l;
            }
        }
        return null;
    }

    /** A wrapper from coreutils, util-linux, findutils or glibc (on every Debian host) and an attack through it. */
    static Stream<Arguments> wrapperAttacks() {
        String loader = loader() == null ? "/lib64/ld-linux-x86-64.so.2" : loader();
        return Stream.of(
                arguments(loader, loader + " /usr/bin/touch PWNED"),
                arguments(loader, loader + " --library-path /usr/lib /usr/bin/touch PWNED"),
                arguments(loader, loader + " ./touch-copy PWNED"), // not executable: the loader runs it anyway
                arguments("env", "env touch PWNED"),
                arguments("env", "/usr/bin/env -i /usr/bin/touch PWNED"),
                arguments("nice", "nice -n 5 touch PWNED"),
                arguments("nohup", "nohup touch PWNED"),
                arguments("timeout", "timeout 10 touch PWNED"),
                arguments("stdbuf", "stdbuf -o0 touch PWNED"),
                arguments("xargs", "xargs -a names.txt touch"),
                arguments("setsid", "setsid -w touch PWNED"),
                arguments("flock", "flock lockfile touch PWNED"),
                arguments("taskset", "taskset -c 0 touch PWNED"),
                arguments("ionice", "ionice -c 3 touch PWNED"),
                arguments("prlimit", "prlimit --nofile=64 touch PWNED"),
                arguments("linux64", "linux64 touch PWNED"),
                arguments("script", "script -qc 'touch PWNED' /dev/null"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("wrapperAttacks")
    void should_refuse_a_wrapper_that_really_runs_a_denied_command_and_run_the_plain_command(String wrapper,
                                                                                          String attack)
            throws Exception {
        Requirements.require(Files.isExecutable(Path.of("/bin/sh")), "/bin/sh");
        Requirements.require(wrapper.startsWith("/") ? Files.exists(Path.of(wrapper))
                : Requirements.findCommand(wrapper) != null, wrapper);
        Path attackDir = Files.createDirectories(dir.resolve("attack"));
        Path controlDir = Files.createDirectories(dir.resolve("control"));
        Files.writeString(attackDir.resolve("names.txt"), "PWNED\n");
        Path copy = Files.copy(Path.of("/usr/bin/touch"), attackDir.resolve("touch-copy"));
        assertThat(copy.toFile().setExecutable(false, false)).isTrue();

        // The attack is real: run unchecked, the wrapper runs touch.
        Run unchecked = run(attackDir, "/bin/sh", "-c", attack);
        assertThat(attackDir.resolve("PWNED")).as("unchecked run: " + unchecked).exists();

        // The policy refuses it, by the built-in rule: under a deny list of the command, and with the wrapper itself
        // on the allow list.
        for (CommandPolicy policy : List.of(CommandPolicy.builder().deny("touch").build(),
                CommandPolicy.builder().allow(wrapper, "touch").build())) {
            assertThatThrownBy(() -> policy.check(attack, CLEAN_PATH)).isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("is denied by the built-in policy");
        }

        // The plain command, allowed, passes and runs.
        ParsedCommand ok = CommandPolicy.allowing(wrapper, "touch").check("touch made", CLEAN_PATH);
        Run controlled = run(controlDir, "/bin/sh", "-c", ok.toShellScript());
        assertThat(controlled.exit()).as(controlled.stderr()).isZero();
        assertThat(controlDir.resolve("made")).exists();
    }
}
