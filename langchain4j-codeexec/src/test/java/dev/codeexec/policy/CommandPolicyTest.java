package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Allow and deny lists, the built-in deny list, precedence, and resolution of command names against PATH. */
class CommandPolicyTest {

    private static final String BUILT_IN = "denied by the built-in policy";
    private static final String DENY_LIST = "denied by the policy's deny list";
    private static final String NOT_ALLOWED = "is not in the policy's allow list";

    private static CommandPolicy allow(String... names) {
        return CommandPolicy.builder().allow(names).build();
    }

    private static CommandPolicy deny(String... names) {
        return CommandPolicy.builder().deny(names).build();
    }

    // ---------------------------------------------------------------- reference corpus: policies

    static Stream<Arguments> referencePolicies() {
        CommandPolicy echoWc = allow("echo", "wc");
        CommandPolicy curl = deny("curl");
        CommandPolicy gitEcho = allow("git", "echo");
        return Stream.of(
                arguments(echoWc, "echo hi | wc -l", null),
                arguments(echoWc, "curl http://x", NOT_ALLOWED),
                arguments(curl, "echo hi", null),
                arguments(curl, "curl http://x", DENY_LIST),
                arguments(curl, "/usr/bin/curl http://x", DENY_LIST),
                // wrappers and re-executing builtins
                arguments(curl, "eval curl http://x", BUILT_IN),
                arguments(curl, "exec curl http://x", BUILT_IN),
                arguments(curl, "command curl http://x", BUILT_IN),
                arguments(curl, "sh -c 'curl http://x'", BUILT_IN),
                arguments(curl, "bash -lc 'curl http://x'", BUILT_IN),
                arguments(curl, "busybox sh -c 'curl http://x'", BUILT_IN),
                arguments(curl, "toybox sh -c 'curl http://x'", BUILT_IN),
                arguments(curl, "xargs -I{} curl http://x", BUILT_IN),
                arguments(curl, "env curl http://x", BUILT_IN),
                arguments(curl, "sudo curl http://x", BUILT_IN),
                arguments(curl, "time curl http://x", BUILT_IN),
                arguments(curl, "nice curl http://x", BUILT_IN),
                arguments(curl, "ionice curl http://x", BUILT_IN),
                arguments(curl, "taskset 1 curl http://x", BUILT_IN),
                arguments(curl, "stdbuf -o0 curl http://x", BUILT_IN),
                arguments(curl, "strace curl http://x", BUILT_IN),
                arguments(curl, "ltrace curl http://x", BUILT_IN),
                arguments(curl, "script -c 'curl http://x' /tmp/log", BUILT_IN),
                arguments(curl, "flock /tmp/x curl http://x", BUILT_IN),
                // state-changing builtins
                arguments(curl, "trap 'curl http://x' EXIT", BUILT_IN),
                arguments(curl, "alias x=curl", BUILT_IN),
                arguments(curl, "unalias ls", BUILT_IN),
                arguments(curl, "enable -f mod.so cmd", BUILT_IN),
                arguments(curl, "export PATH=./bin", BUILT_IN),
                arguments(curl, "unset PATH", BUILT_IN),
                arguments(curl, "readonly PATH=./bin", BUILT_IN),
                arguments(curl, "local PATH=./bin", BUILT_IN),
                arguments(curl, "declare -x PATH=./bin", BUILT_IN),
                arguments(curl, "typeset -x PATH=./bin", BUILT_IN),
                arguments(curl, "set -o vi", BUILT_IN),
                arguments(curl, "shopt -s extdebug", BUILT_IN),
                arguments(curl, "hash -p ./echo echo", BUILT_IN),
                arguments(curl, "cd /tmp", BUILT_IN),
                arguments(curl, "pushd /tmp", BUILT_IN),
                arguments(curl, "popd", BUILT_IN),
                // variable-writing builtins, even when the rest is allow-listed
                arguments(gitEcho, "printf -v PATH ./tools/bin", BUILT_IN),
                arguments(gitEcho, "printf -v PATH ./tools/bin ; git", BUILT_IN),
                arguments(gitEcho, "read PATH", BUILT_IN),
                arguments(gitEcho, "getopts a x", BUILT_IN),
                arguments(gitEcho, "let X=1", BUILT_IN),
                arguments(gitEcho, "mapfile X", BUILT_IN),
                arguments(gitEcho, "readarray X", BUILT_IN),
                // a backslash in double quotes stays, so this is not ./safe
                arguments(allow("./safe"), "\"./s\\afe\"", NOT_ALLOWED),
                // no allow list overrides the built-in list
                arguments(allow("sh", "bash", "busybox", "echo"), "sh -c 'echo hi'", BUILT_IN),
                arguments(allow("sh", "bash", "busybox", "echo"), "bash -c 'echo hi'", BUILT_IN),
                arguments(allow("sh", "bash", "busybox", "echo"), "busybox sh -c 'echo hi'", BUILT_IN),
                // bare allow entries match bare names only
                arguments(allow("echo"), "echo hi", null),
                arguments(allow("echo"), "./echo hi", NOT_ALLOWED),
                arguments(allow("echo"), "work/bin/echo hi", NOT_ALLOWED),
                arguments(allow("echo"), "/usr/bin/echo hi", NOT_ALLOWED),
                // pathful allow entries match that exact path only
                arguments(allow("/usr/bin/echo"), "/usr/bin/echo hi", null),
                arguments(allow("/usr/bin/echo"), "echo hi", NOT_ALLOWED),
                // deny beats allow
                arguments(CommandPolicy.builder().allow("echo").deny("echo").build(), "echo hi", DENY_LIST),
                // case and Windows spellings (deny folds on every OS; allow is exact on every OS)
                arguments(deny("CURL"), "curl.exe http://x", DENY_LIST),
                arguments(deny("curl.exe"), "CURL http://x", DENY_LIST),
                arguments(deny("curl.exe"), "curl http://x", DENY_LIST),
                arguments(deny("CURL.EXE"), "curl http://x", DENY_LIST),
                arguments(deny("Curl"), "curl.exe http://x", DENY_LIST),
                arguments(curl, "CURL http://x", DENY_LIST),
                arguments(curl, "Curl http://x", DENY_LIST),
                arguments(curl, "/usr/bin/CURL http://x", DENY_LIST),
                arguments(CommandPolicy.builder().allow("echo").deny("curl").build(), "CURL.EXE http://x", DENY_LIST),
                arguments(CommandPolicy.builder().allow("echo").deny("curl").build(), "ECHO.EXE hi", NOT_ALLOWED),
                arguments(CommandPolicy.builder().allow("echo").deny("curl").build(), "CMD.EXE /C echo hi", BUILT_IN),
                arguments(allow("./safe"), "./SAFE", NOT_ALLOWED),
                arguments(allow("echo"), "ECHO hi", NOT_ALLOWED),
                arguments(curl, "SH -c 'curl http://x'", BUILT_IN),
                arguments(curl, "Bash -c 'curl http://x'", BUILT_IN),
                arguments(curl, "EVAL -c 'curl http://x'", BUILT_IN),
                arguments(curl, "TIME -c 'curl http://x'", BUILT_IN),
                arguments(curl, "cmd.exe /c echo hi", BUILT_IN),
                arguments(curl, "powershell.exe -Command echo hi", BUILT_IN),
                // workspace_exec_policy_test.go, deny[curl]: every bypass must fail
                arguments(curl, "echo $(curl http://x)", "command substitution"),
                arguments(curl, "echo `curl http://x`", "command substitution"),
                arguments(curl, "echo > /tmp/foo", "redirection"),
                arguments(curl, "(curl http://x)", "subshell"),
                arguments(curl, "FOO=curl $FOO http://x", "leading variable assignment"),
                arguments(allow("echo"), "echo hello", null),
                arguments(allow("echo"), "ls -la", NOT_ALLOWED),
                arguments(echoWc, "echo hello world | wc -w", null),
                arguments(echoWc, "echo hello | curl http://example.com", NOT_ALLOWED),
                arguments(deny("curl", "wget"), "curl http://internal.example.com", DENY_LIST));
    }

    @ParameterizedTest(name = "[{index}] {0}: {1} ~ {2}")
    @MethodSource("referencePolicies")
    void should_apply_the_reference_policy_corpus(CommandPolicy policy, String line, String expectedError) {
        if (expectedError == null) {
            ParsedCommand parsed = policy.check(line);
            assertThat(parsed.commandLine()).isEqualTo(line);
        } else {
            assertThatThrownBy(() -> policy.check(line))
                    .isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining(expectedError);
        }
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"eval curl http://x", "sh -c 'curl http://x'", "busybox sh -c 'echo hi'",
            "echo hi | wc -l"})
    void should_apply_the_built_in_list_when_a_configured_policy_has_no_lists(String line) {
        // The reference's zero policy runs everything unparsed; here that is permissive(). A policy from the builder
        // always parses and always applies the built-in list.
        CommandPolicy empty = CommandPolicy.builder().build();

        if (line.startsWith("echo")) {
            assertThat(empty.check(line).segments()).hasSize(2);
        } else {
            assertThatThrownBy(() -> empty.check(line)).hasMessageContaining(BUILT_IN);
        }
        assertThat(CommandPolicy.permissive().isEnforcing()).isFalse();
    }

    @Test
    void should_refuse_to_check_when_policy_is_permissive() {
        assertThatThrownBy(() -> CommandPolicy.permissive().check("echo hi"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("isEnforcing()");
        assertThat(CommandPolicy.permissive()).hasToString("CommandPolicy[permissive]");
        assertThat(CommandPolicy.builder().build().isEnforcing()).isTrue();
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @CsvSource({
            "cmd.exe, cmd", "CMD.EXE, cmd", "powershell.exe, powershell", "PowerShell.EXE, powershell",
            "python3.13t, python", "/usr/bin/python3.6m, python", "python2.7mu, python", "python3.11d, python",
            "python3.11-dbg, python", "perf_5.10, perf", "lldb-18, lldb", "tclsh8.6, tclsh",
            "script.bat, script", "helper.cmd, helper", "legacy.com, legacy", "run.ps1, run", "curl, curl",
            "no.ext.here, no.ext.here", "SH, sh", "/usr/bin/Python3.11, python", "bash-5.2, bash",
            "./tools/bin/Tool, tool", "C:\\Tools\\CURL.EXE, curl"})
    void should_fold_names_loosely_when_matching_deny_lists(String name, String expected) {
        assertThat(CommandNames.candidates(name)).contains(expected);
    }

    @Test
    void should_match_long_names_without_backtracking_when_they_are_mostly_digits() {
        String name = "1".repeat(CommandPolicy.MAX_COMMAND_BYTES - 10) + "x";

        assertThat(CommandNames.candidates(name)).containsExactly(name);
        assertThat(CommandNames.candidates("tool" + "1".repeat(5000))).containsExactly("tool" + "1".repeat(5000),
                "tool");
        // alternating versions are removed a bounded number of times, so the candidates stay few
        String dotted = "tool" + ".1".repeat(CommandPolicy.MAX_COMMAND_BYTES / 2 - 10);
        assertThat(CommandNames.candidates(dotted)).hasSize(CommandNames.MAX_STRIPS + 1);
        assertThat(CommandNames.candidates("python3.12.1")).endsWith("python");
        assertThatThrownBy(() -> allow("ls").check(name)).hasMessageContaining("not in the policy's allow list");
    }

    // ---------------------------------------------------------------- own cases

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"zsh", "dash", "ksh", "fish", "pwsh", "rbash", "csh", "tcsh", "coproc", "fc", "source",
            ".", "builtin", "watch", "parallel", "setpriv", "nsenter", "pkexec", "chrt", "prlimit", "systemd-run",
            "at", "crontab", "bwrap", "firejail", "unbuffer", "setarch", "ssh-agent", "ulimit", "umask", "bind",
            "complete", "compgen"})
    void should_deny_every_built_in_entry_even_when_allow_listed(String name) {
        CommandPolicy policy = CommandPolicy.builder().allow(name).build();

        assertThat(CommandPolicy.builtInDeniedCommands()).contains(name);
        assertThatThrownBy(() -> policy.check(name.equals(".") ? ". x" : name + " x"))
                .hasMessageContaining(BUILT_IN)
                .hasMessageContaining("'" + name + "'");
    }

    @Test
    void should_deny_built_in_names_written_with_a_path() {
        CommandPolicy policy = allow("/bin/sh", "./env", "/usr/bin/env");

        assertThatThrownBy(() -> policy.check("/bin/sh -c id")).hasMessageContaining(BUILT_IN);
        assertThatThrownBy(() -> policy.check("./env id")).hasMessageContaining(BUILT_IN);
        assertThatThrownBy(() -> policy.check("/usr/bin/env id")).hasMessageContaining(BUILT_IN);
        assertThatThrownBy(() -> policy.check("/usr/bin/bash5 -c id")).hasMessageContaining(BUILT_IN);
    }

    @Test
    void should_accept_bare_name_but_refuse_its_path_when_allow_list_names_it_bare() {
        CommandPolicy policy = allow("curl", "echo");

        assertThat(policy.check("curl https://example.com").commands()).containsExactly("curl");
        assertThatThrownBy(() -> policy.check("/usr/bin/curl https://example.com"))
                .hasMessageContaining(NOT_ALLOWED)
                .hasMessageContaining("the allow list names 'curl' without a path; write it bare")
                .hasMessageContaining("allowed commands: curl, echo");
    }

    @Test
    void should_deny_by_basename_and_version_when_deny_entry_is_a_path_or_family() {
        CommandPolicy policy = deny("/usr/bin/curl", "python");

        assertThatThrownBy(() -> policy.check("curl x")).hasMessageContaining(DENY_LIST);
        assertThatThrownBy(() -> policy.check("./tools/curl x")).hasMessageContaining(DENY_LIST);
        assertThatThrownBy(() -> policy.check("python3.12 x.py")).hasMessageContaining(DENY_LIST);
        assertThatThrownBy(() -> policy.check("/usr/bin/Python3 x.py")).hasMessageContaining(DENY_LIST);
        assertThat(policy.check("wc -l x").commands()).containsExactly("wc");
    }

    @Test
    void should_check_every_segment_when_line_has_several() {
        CommandPolicy policy = allow("cat", "grep", "wc");

        assertThat(policy.check("cat f | grep x | wc -l").segments()).hasSize(3);
        assertThatThrownBy(() -> policy.check("cat f | grep x | wc -l ; rm -rf work"))
                .hasMessageContaining("'rm'");
        assertThatThrownBy(() -> policy.check("cat f || sh -c id")).hasMessageContaining(BUILT_IN);
    }

    @Test
    void should_apply_precedence_built_in_then_deny_then_allow() {
        CommandPolicy policy = CommandPolicy.builder().allow("env", "curl").deny("env", "curl").build();

        assertThatThrownBy(() -> policy.check("env x")).hasMessageContaining(BUILT_IN);
        assertThatThrownBy(() -> policy.check("curl x")).hasMessageContaining(DENY_LIST);
        assertThatThrownBy(() -> policy.check("wget x")).hasMessageContaining(NOT_ALLOWED);
    }

    @Test
    void should_give_a_message_a_model_can_act_on() {
        assertThatThrownBy(() -> deny("curl").check("curl http://x"))
                .hasMessage("command 'curl' is denied by the policy's deny list");
        assertThatThrownBy(() -> allow("echo", "wc").check("ls -la"))
                .hasMessage("command 'ls' is not in the policy's allow list; allowed commands: echo, wc");
        assertThatThrownBy(() -> allow("echo").check("sh -c 'ls'"))
                .hasMessageStartingWith("command 'sh' is denied by the built-in policy")
                .hasMessageContaining("Run the command you want directly");
    }

    @Test
    void should_run_default_validators_unless_replaced() {
        assertThatThrownBy(() -> CommandPolicy.builder().build().check("find . -exec rm {} +"))
                .hasMessageContaining("argument validator")
                .hasMessageContaining("-exec");
        assertThatThrownBy(() -> allow("/usr/bin/find").check("/usr/bin/find . -delete"))
                .hasMessageContaining("-delete");
        assertThatThrownBy(() -> allow("python3.11").check("python3.11 -c 'import os'"))
                .hasMessageContaining("'-c'");

        CommandPolicy none = CommandPolicy.builder().validators(Map.of()).build();
        assertThat(none.check("find . -exec cat {} +").commands()).containsExactly("find");
        assertThat(none.validators()).isEmpty();

        CommandPolicy withoutFind = CommandPolicy.builder().validator("find", null).build();
        assertThat(withoutFind.check("find . -delete").commands()).containsExactly("find");
        assertThat(withoutFind.validators()).doesNotContainKey("find").containsKey("git");
    }

    @Test
    void should_run_a_custom_validator_when_one_is_registered() {
        CommandPolicy policy = CommandPolicy.builder()
                .allow("mytool", "python3")
                .validator("MyTool.exe", argv -> {
                    if (argv.contains("--unsafe")) {
                        throw new PolicyViolationException("mytool --unsafe is not allowed");
                    }
                })
                .validator("python3", ArgumentValidators.pythonAllowingInlineCode())
                .build();

        assertThat(policy.check("mytool --safe").commands()).containsExactly("mytool");
        assertThatThrownBy(() -> policy.check("mytool --unsafe")).hasMessage("mytool --unsafe is not allowed");
        // the more specific key (python3) wins over the default one (python)
        assertThat(policy.check("python3 -c 'print(1)'").commands()).containsExactly("python3");
    }

    @Test
    void should_validate_entries_when_building() {
        assertThatThrownBy(() -> CommandPolicy.builder().allow(" ")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("allow entry");
        assertThatThrownBy(() -> CommandPolicy.builder().allow("rm -rf")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("'rm -rf'");
        assertThatThrownBy(() -> CommandPolicy.builder().deny("a\nb")).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> CommandPolicy.builder().deny("/usr/bin/")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("not a directory");
        assertThatThrownBy(() -> CommandPolicy.builder().allow((String) null))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> CommandPolicy.builder().allow((List<String>) null))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_be_an_immutable_value_when_built() {
        CommandPolicy a = CommandPolicy.builder().allow("ls", "cat").deny("curl").build();
        CommandPolicy b = a.toBuilder().build();

        assertThat(b).isEqualTo(a).hasSameHashCodeAs(a);
        assertThat(a.toBuilder().allow("wc").build()).isNotEqualTo(a);
        assertThat(a.allowedCommands()).containsExactly("cat", "ls");
        assertThat(a.deniedCommands()).containsExactly("curl");
        assertThatThrownBy(() -> a.allowedCommands().add("sh")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> a.validators().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> CommandPolicy.builtInDeniedCommands().remove("sh"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(a.toString()).contains("allow=[cat, ls]", "deny=[curl]", "find");
        assertThat(CommandPolicy.allowing("ls")).isEqualTo(CommandPolicy.builder().allow("ls").build());
    }

    // ---------------------------------------------------------------- resolution against PATH

    @TempDir
    Path tmp;

    private Path executable(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        Path f = dir.resolve(name);
        // an ELF magic and the name: a program file of its own identity (never run here)
        Files.writeString(f, "\u007fELF " + name + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
        return f;
    }

    @Test
    void should_resolve_bare_names_to_the_first_match_on_path() throws IOException {
        Path first = executable(tmp.resolve("first"), "tool");
        executable(tmp.resolve("second"), "tool");
        executable(tmp.resolve("second"), "other");
        String path = tmp.resolve("first") + ":" + tmp.resolve("second") + "/";

        ParsedCommand resolved = allow("tool", "other").check("tool a | other b", path);

        assertThat(resolved.segments().get(0).argv()).containsExactly(first.toString(), "a");
        assertThat(resolved.segments().get(1).argv()).containsExactly(tmp.resolve("second/other").toString(), "b");
        assertThat(resolved.toShellScript()).startsWith(first.toString() + " a | ");
        assertThat(resolved.commandLine()).isEqualTo("tool a | other b");
    }

    @Test
    void should_not_be_shadowed_when_path_has_relative_entries_the_model_can_write() throws IOException {
        // The attack: a tool planted in the working directory (the workspace) or a relative PATH entry.
        Path system = executable(tmp.resolve("system"), "tool");
        executable(tmp, "tool");
        executable(tmp.resolve("work/bin"), "tool");
        String path = ".::work/bin:" + tmp.resolve("system");

        ParsedCommand resolved = allow("tool").check("tool").resolveExecutables(path,
                p -> p.startsWith("/") && Files.isExecutable(Path.of(p)));

        assertThat(resolved.commands()).containsExactly(system.toString());
        // positive control: the same check finds the planted tool when its directory is an absolute entry
        assertThat(allow("tool").check("tool", tmp + ":" + tmp.resolve("system")).commands())
                .containsExactly(tmp.resolve("tool").toString());
    }

    @Test
    void should_skip_non_executables_and_directories_when_resolving() throws IOException {
        Path plain = tmp.resolve("a/tool");
        Files.createDirectories(plain.getParent());
        Files.writeString(plain, "not executable");
        Files.createDirectories(tmp.resolve("b/tool"));
        Path real = executable(tmp.resolve("c"), "tool");

        ParsedCommand resolved = allow("tool").check("tool",
                tmp.resolve("a") + ":" + tmp.resolve("b") + ":" + tmp.resolve("c"));

        assertThat(resolved.commands()).containsExactly(real.toString());
    }

    @Test
    void should_keep_the_link_name_when_the_executable_is_a_symbolic_link() throws IOException {
        Path target = executable(tmp.resolve("real"), "multicall");
        Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(tmp.resolve("bin/tool"), target);

        ParsedCommand resolved = allow("tool").check("tool", tmp.resolve("bin").toString());

        // busybox-style binaries pick their behaviour from the name they run under
        assertThat(resolved.commands()).containsExactly(tmp.resolve("bin/tool").toString());
    }

    @Test
    void should_check_the_file_a_link_names_when_it_is_a_wrapper() throws IOException {
        // x86_64 is a link to setarch, Debian's open a link to openvt: the name on PATH is not the program that runs
        Path setarch = executable(tmp.resolve("real"), "setarch");
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path link = Files.createSymbolicLink(bin.resolve("myarch"), setarch);
        executable(bin, "tool");
        Files.createSymbolicLink(bin.resolve("tool-link"), bin.resolve("tool"));

        assertThatThrownBy(() -> allow("myarch").check("myarch curl http://x", bin.toString()))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageStartingWith("command 'myarch' is denied by the built-in policy: it runs 'setarch', a"
                        + " wrapper that sets the environment")
                .hasMessageNotContaining(tmp.toString());
        assertThatThrownBy(() -> allow(link.toString()).check(link + " curl http://x", bin.toString()))
                .hasMessageContaining(BUILT_IN);
        // positive control: a link to an ordinary program runs under the link's name
        assertThat(allow("tool-link").check("tool-link x", bin.toString()).commands())
                .containsExactly(bin.resolve("tool-link").toString());
    }

    @Test
    void should_apply_the_deny_list_and_the_validator_of_the_file_a_link_names() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("fetch"), executable(tmp.resolve("real"), "curl"));
        Files.createSymbolicLink(bin.resolve("py"), executable(tmp.resolve("real"), "python3.12"));
        CommandPolicy policy = CommandPolicy.builder().allow("fetch", "py").deny("curl").build();

        assertThatThrownBy(() -> policy.check("fetch http://x", bin.toString()))
                .hasMessage("command 'fetch' is denied by the policy's deny list: it runs 'curl'");
        assertThatThrownBy(() -> policy.check("py -c 'import os'", bin.toString()))
                .hasMessageContaining("was refused by its argument validator")
                .hasMessageContaining("'-c'");
        // positive control: the script form passes python's validator
        assertThat(policy.check("py work/a.py", bin.toString()).commands())
                .containsExactly(bin.resolve("py").toString());
    }

    @Test
    void should_judge_a_multi_call_binary_by_the_name_it_runs_under() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path busybox = executable(tmp.resolve("real"), "busybox");
        Files.createSymbolicLink(bin.resolve("ls"), busybox);
        Files.createSymbolicLink(bin.resolve("env"), busybox);

        assertThat(allow("ls").check("ls -l", bin.toString()).commands())
                .containsExactly(bin.resolve("ls").toString());
        assertThatThrownBy(() -> allow("env").check("env curl", bin.toString())).hasMessageContaining(BUILT_IN);
        assertThatThrownBy(() -> allow("busybox").check("busybox ls", bin.toString()))
                .hasMessageContaining(BUILT_IN);
    }

    @Test
    void should_not_follow_links_for_commands_the_policy_did_not_check() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("myarch"), executable(tmp.resolve("real"), "setarch"));
        ParsedCommand unchecked = new ParsedCommand("myarch x",
                List.of(new ParsedCommand.Segment(List.of("myarch", "x"))), List.of());

        assertThat(unchecked.resolveExecutables(bin.toString()).commands())
                .containsExactly(bin.resolve("myarch").toString());
        // and a lookup on another system never follows links on this one
        assertThat(allow("myarch").check("myarch x").resolveExecutables(bin.toString(),
                p -> p.equals(bin.resolve("myarch").toString())).commands())
                .containsExactly(bin.resolve("myarch").toString());
    }

    @Test
    void should_refuse_when_command_is_not_on_path() {
        assertThatThrownBy(() -> allow("tool").check("tool", tmp.toString()))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("command 'tool' was not found on the PATH of a policy run")
                .hasMessageNotContaining(tmp.toString());
    }

    @Test
    void should_keep_pathful_commands_and_use_the_given_lookup_when_resolving_for_another_system() {
        ParsedCommand parsed = allow("echo", "./run.sh").check("echo hi && ./run.sh");

        ParsedCommand resolved = parsed.resolveExecutables("/usr/local/bin:/usr/bin:/bin",
                Set.of("/usr/bin/echo", "/bin/echo")::contains);

        assertThat(resolved.commands()).containsExactly("/usr/bin/echo", "./run.sh");
        assertThat(resolved.operators()).isEqualTo(parsed.operators());
        assertThat(resolved.toShellScript()).isEqualTo("/usr/bin/echo hi && ./run.sh");
    }

    @Test
    void should_reject_blank_path() {
        ParsedCommand parsed = allow("echo").check("echo");

        assertThatThrownBy(() -> parsed.resolveExecutables(" ")).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> parsed.resolveExecutables(null)).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> parsed.resolveExecutables("/bin", (java.util.function.Predicate<String>) null))
                .isInstanceOf(InvalidSpecException.class);
    }
}
