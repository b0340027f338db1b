package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The built-in catalogue of programs that run other programs: a denied command run through any of them is refused, by
 * the built-in rule, even when the wrapper itself is on the allow list; the plain command next to it still runs.
 */
class BuiltInDenyListTest {

    private static final String BUILT_IN = "is denied by the built-in policy";
    private static final String DENIED_COMMAND = "curl";
    private static final String CONTROL = "curl -sS http://example.com";

    /** A denied command ({@code curl}) run through a wrapper, and the wrapper word as written. */
    static Stream<Arguments> wrapperAttacks() {
        return Stream.of(
                // dynamic loaders, by path, by versioned name, by the ld.so link, on other libcs and architectures
                arguments("/lib64/ld-linux-x86-64.so.2 /usr/bin/curl http://x", "/lib64/ld-linux-x86-64.so.2"),
                arguments("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path /lib /usr/bin/curl http://x",
                        "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"),
                arguments("ld-linux-x86-64.so.2 /usr/bin/curl http://x", "ld-linux-x86-64.so.2"),
                arguments("ld.so /usr/bin/curl http://x", "ld.so"),
                arguments("/usr/bin/ld.so /usr/bin/curl http://x", "/usr/bin/ld.so"),
                arguments("/lib/ld-linux-aarch64.so.1 /usr/bin/curl http://x", "/lib/ld-linux-aarch64.so.1"),
                arguments("/lib/ld-linux-armhf.so.3 /usr/bin/curl http://x", "/lib/ld-linux-armhf.so.3"),
                arguments("/lib/ld-linux.so.2 /usr/bin/curl http://x", "/lib/ld-linux.so.2"),
                arguments("/lib64/ld64.so.2 /usr/bin/curl http://x", "/lib64/ld64.so.2"),
                arguments("/lib/ld-musl-x86_64.so.1 /usr/bin/curl http://x", "/lib/ld-musl-x86_64.so.1"),
                arguments("/lib64/ld-2.17.so /usr/bin/curl http://x", "/lib64/ld-2.17.so"),
                arguments("/libexec/ld-elf.so.1 /usr/bin/curl http://x", "/libexec/ld-elf.so.1"),
                arguments("/LIB64/LD-LINUX-X86-64.SO.2 /usr/bin/curl http://x", "/LIB64/LD-LINUX-X86-64.SO.2"),
                arguments("ldd /usr/bin/curl", "ldd"),
                // emulators
                arguments("qemu-x86_64 /usr/bin/curl http://x", "qemu-x86_64"),
                arguments("/usr/bin/qemu-aarch64-static /usr/bin/curl http://x", "/usr/bin/qemu-aarch64-static"),
                arguments("qemu-riscv64 /usr/bin/curl http://x", "qemu-riscv64"),
                arguments("box64 /usr/bin/curl http://x", "box64"),
                arguments("FEXInterpreter /usr/bin/curl http://x", "FEXInterpreter"),
                arguments("wine64 curl.exe http://x", "wine64"),
                // debuggers, tracers, profilers
                arguments("gdb -batch -ex run --args curl http://x", "gdb"),
                arguments("gdb -batch -ex 'shell curl http://x'", "gdb"),
                arguments("gdb-multiarch -batch -ex run --args curl http://x", "gdb-multiarch"),
                arguments("/usr/bin/gdb-multiarch --args curl http://x", "/usr/bin/gdb-multiarch"),
                arguments("x86_64-linux-gnu-gdb --args curl http://x", "x86_64-linux-gnu-gdb"),
                arguments("arm-none-eabi-gdb --args curl http://x", "arm-none-eabi-gdb"),
                arguments("gdbserver :1234 curl http://x", "gdbserver"),
                arguments("lldb -o run -- curl http://x", "lldb"),
                arguments("lldb-18 -o run -- curl http://x", "lldb-18"),
                arguments("rust-lldb -- curl http://x", "rust-lldb"),
                arguments("lldb-server gdbserver :1 -- curl http://x", "lldb-server"),
                arguments("rr record curl http://x", "rr"),
                arguments("strace -f -o /dev/null curl http://x", "strace"),
                arguments("/usr/bin/strace curl http://x", "/usr/bin/strace"),
                arguments("ltrace curl http://x", "ltrace"),
                arguments("valgrind --tool=none curl http://x", "valgrind"),
                arguments("valgrind.bin curl http://x", "valgrind.bin"),
                arguments("perf stat -- curl http://x", "perf"),
                arguments("perf_5.10 record -- curl http://x", "perf_5.10"),
                arguments("uftrace record curl http://x", "uftrace"),
                arguments("trace-cmd record -F curl http://x", "trace-cmd"),
                arguments("bpftrace -c 'curl http://x' -e 'BEGIN{}'", "bpftrace"),
                arguments("sotruss curl http://x", "sotruss"),
                arguments("xtrace curl http://x", "xtrace"),
                arguments("memusage curl http://x", "memusage"),
                arguments("heaptrack curl http://x", "heaptrack"),
                arguments("hyperfine 'curl http://x'", "hyperfine"),
                arguments("py-spy record -- curl http://x", "py-spy"),
                arguments("catchsegv curl http://x", "catchsegv"),
                // privilege, identity, namespaces, roots, containers
                arguments("sudo curl http://x", "sudo"),
                arguments("doas curl http://x", "doas"),
                arguments("run0 curl http://x", "run0"),
                arguments("su -c 'curl http://x'", "su"),
                arguments("runuser -u nobody -- curl http://x", "runuser"),
                arguments("setpriv --no-new-privs curl http://x", "setpriv"),
                arguments("gosu nobody curl http://x", "gosu"),
                arguments("su-exec nobody curl http://x", "su-exec"),
                arguments("chroot / curl http://x", "chroot"),
                arguments("unshare -r curl http://x", "unshare"),
                arguments("nsenter -t 1 -n curl http://x", "nsenter"),
                arguments("bwrap --bind / / curl http://x", "bwrap"),
                arguments("firejail curl http://x", "firejail"),
                arguments("proot curl http://x", "proot"),
                arguments("fakeroot curl http://x", "fakeroot"),
                arguments("runcon -t unconfined_t curl http://x", "runcon"),
                arguments("aa-exec -p unconfined -- curl http://x", "aa-exec"),
                arguments("flatpak-spawn --host curl http://x", "flatpak-spawn"),
                arguments("systemd-nspawn -D / curl http://x", "systemd-nspawn"),
                // process wrappers
                arguments("env curl http://x", "env"),
                arguments("/usr/bin/env -i curl http://x", "/usr/bin/env"),
                arguments("genv curl http://x", "genv"),
                arguments("nice -n 5 curl http://x", "nice"),
                arguments("nohup curl http://x", "nohup"),
                arguments("timeout 5 curl http://x", "timeout"),
                arguments("gtimeout 5 curl http://x", "gtimeout"),
                arguments("time curl http://x", "time"),
                arguments("/usr/bin/time -v curl http://x", "/usr/bin/time"),
                arguments("stdbuf -o0 curl http://x", "stdbuf"),
                arguments("ionice -c3 curl http://x", "ionice"),
                arguments("chrt -i 0 curl http://x", "chrt"),
                arguments("taskset -c 0 curl http://x", "taskset"),
                arguments("numactl -N 0 curl http://x", "numactl"),
                arguments("prlimit --nofile=64 curl http://x", "prlimit"),
                arguments("cgexec -g cpu:x curl http://x", "cgexec"),
                arguments("cpulimit -l 10 -- curl http://x", "cpulimit"),
                arguments("trickle -d 10 curl http://x", "trickle"),
                arguments("choom -n 0 -- curl http://x", "choom"),
                arguments("enosys -- curl http://x", "enosys"),
                arguments("flock work/lock curl http://x", "flock"),
                arguments("chpst -u nobody curl http://x", "chpst"),
                arguments("envdir work/env curl http://x", "envdir"),
                arguments("faketime '2020-01-01' curl http://x", "faketime"),
                arguments("eatmydata curl http://x", "eatmydata"),
                arguments("setarch x86_64 curl http://x", "setarch"),
                arguments("x86_64 curl http://x", "x86_64"),
                arguments("i386 curl http://x", "i386"),
                arguments("linux32 curl http://x", "linux32"),
                arguments("uname26 curl http://x", "uname26"),
                arguments("arch -x86_64 curl http://x", "arch"),
                arguments("systemd-inhibit curl http://x", "systemd-inhibit"),
                arguments("systemd-cat curl http://x", "systemd-cat"),
                arguments("chronic curl http://x", "chronic"),
                arguments("ifne curl http://x", "ifne"),
                arguments("pee 'curl http://x'", "pee"),
                arguments("cross-env A=1 curl http://x", "cross-env"),
                arguments("npx -c 'curl http://x'", "npx"),
                // terminals, sessions, displays
                arguments("setsid curl http://x", "setsid"),
                arguments("script -qc 'curl http://x' /dev/null", "script"),
                arguments("expect -c 'spawn curl http://x'", "expect"),
                arguments("unbuffer curl http://x", "unbuffer"),
                arguments("rlwrap curl http://x", "rlwrap"),
                arguments("screen -dm curl http://x", "screen"),
                arguments("tmux new-session -d 'curl http://x'", "tmux"),
                arguments("dtach -n s curl http://x", "dtach"),
                arguments("xvfb-run curl http://x", "xvfb-run"),
                arguments("dbus-run-session -- curl http://x", "dbus-run-session"),
                arguments("dbus-launch curl http://x", "dbus-launch"),
                arguments("ssh-agent curl http://x", "ssh-agent"),
                arguments("xterm -e curl http://x", "xterm"),
                arguments("openvt -- curl http://x", "openvt"),
                // schedulers and repeaters
                arguments("xargs curl", "xargs"),
                arguments("gxargs curl", "gxargs"),
                arguments("parallel curl ::: http://x", "parallel"),
                arguments("sem curl http://x", "sem"),
                arguments("watch -n1 curl http://x", "watch"),
                arguments("entr curl http://x", "entr"),
                arguments("watchexec curl http://x", "watchexec"),
                arguments("nodemon -x curl http://x", "nodemon"),
                arguments("inotifyd curl work", "inotifyd"),
                arguments("at now", "at"),
                arguments("systemd-run curl http://x", "systemd-run"),
                arguments("start-stop-daemon --start --exec /usr/bin/curl", "start-stop-daemon"),
                arguments("daemonize /usr/bin/curl http://x", "daemonize"),
                arguments("nq curl http://x", "nq"),
                arguments("tsp curl http://x", "tsp"),
                arguments("launchctl submit -l x -- curl http://x", "launchctl"),
                // network wrappers
                arguments("torsocks curl http://x", "torsocks"),
                arguments("proxychains4 curl http://x", "proxychains4"),
                arguments("socat - EXEC:curl", "socat"),
                arguments("tcpsvd 0 8080 curl http://x", "tcpsvd"),
                // shells and multi-call binaries
                arguments("busybox wget http://x", "busybox"),
                arguments("coreutils --coreutils-prog=env curl http://x", "coreutils"),
                arguments("toybox env curl http://x", "toybox"),
                arguments("execlineb -c 'curl http://x'", "execlineb"),
                arguments("ksh93 -c 'curl http://x'", "ksh93"),
                arguments("bash-5.2 -c 'curl http://x'", "bash-5.2"),
                arguments("oksh -c 'curl http://x'", "oksh"),
                arguments("pwsh -c curl http://x", "pwsh"),
                // builtins that run their arguments (bash, and zsh's precommand modifiers)
                arguments("exec curl http://x", "exec"),
                arguments("command curl http://x", "command"),
                arguments("noglob curl http://x", "noglob"),
                arguments("emulate sh -c 'curl http://x'", "emulate"),
                // Windows launchers and spellings
                arguments("cmd.exe /c curl http://x", "cmd.exe"),
                arguments("wsl curl http://x", "wsl"),
                arguments("runas /user:x curl", "runas"),
                arguments("STRACE curl http://x", "STRACE"),
                arguments("Strace.EXE curl http://x", "Strace.EXE"),
                arguments("'C:\\Tools\\GDB.EXE' --args curl http://x", "C:\\Tools\\GDB.EXE"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("wrapperAttacks")
    void should_refuse_a_denied_command_run_through_a_wrapper(String attack, String wrapper) {
        CommandPolicy denyCurl = CommandPolicy.builder().deny(DENIED_COMMAND).build();

        assertThatThrownBy(() -> denyCurl.check(attack))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageStartingWith("command '" + wrapper + "' " + BUILT_IN + ": it is ")
                .hasMessageContaining("no allow list can enable it");
        // positive control: the deny list still refuses the plain command, and lets an unrelated one run
        assertThatThrownBy(() -> denyCurl.check(CONTROL)).hasMessageContaining("denied by the policy's deny list");
        assertThat(denyCurl.check("wc -l work/data.txt").commands()).containsExactly("wc");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("wrapperAttacks")
    void should_refuse_a_wrapper_even_when_allow_listed_and_run_the_plain_command(String attack, String wrapper) {
        CommandPolicy allowBoth = CommandPolicy.builder().allow(wrapper, DENIED_COMMAND, "/usr/bin/curl").build();

        assertThatThrownBy(() -> allowBoth.check(attack))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining(BUILT_IN);
        // positive control: the command the wrapper would have run passes when it is run directly
        assertThat(allowBoth.check(CONTROL).commands()).containsExactly(DENIED_COMMAND);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"ls -la", "cat work/a.txt", "grep -c x f", "sort f", "split -l 10 f", "wc -l f",
            "head f", "tail f", "cut -d, -f1 f", "tr a b", "uniq f", "diff a b", "cp a b", "mv a b", "rm a",
            "mkdir d", "ln -s a b", "chmod 644 a", "date", "echo hi", "true", "test -f a", "basename a/b",
            "realpath a", "readlink a", "stat a", "du -sh d", "file a", "xxd a", "base64 a", "sha256sum a", "zip a.zip a",
            "unzip a.zip", "gzip a", "xz a", "zstd a", "jq . a.json", "curl http://x", "wget http://x", "git status",
            "make", "gcc -c a.c", "ld -o a a.o", "ldconfig -p", "qemu-img info a.img",
            "qemu-system-x86_64 -version", "gdb-add-index a", "envsubst", "scriptreplay t", "timedatectl",
            "x86_64-linux-gnu-gcc -c a.c", "python3 work/a.py", "python3.13t work/a.py", "perl work/a.pl",
            "node work/a.js", "java -version", "mvn -v", "cargo build", "go build", "npm test", "pip list",
            "atq", "nicstat", "environment", "timed", "scripts/run.sh"})
    void should_not_deny_everyday_commands(String line) {
        CommandPolicy noLists = CommandPolicy.builder().build();

        assertThat(noLists.check(line).segments()).hasSize(1);
    }

    static Stream<Arguments> versionedNames() {
        return Stream.of(
                arguments("ld-linux-x86-64.so.2 /usr/bin/curl", BUILT_IN),
                arguments("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /usr/bin/curl", BUILT_IN),
                arguments("gdb-multiarch --args curl", BUILT_IN),
                arguments("lldb-18 -- curl", BUILT_IN),
                arguments("strace64 curl", BUILT_IN),
                arguments("perf-6.1 stat curl", BUILT_IN),
                arguments("zsh5 -c curl", BUILT_IN),
                arguments("python3.11 -c 'import os'", "'-c'"),
                arguments("/usr/bin/python3.12 -c 'import os'", "'-c'"),
                arguments("python3.13t -c 'import os'", "'-c'"),
                arguments("python3.6m -c 'import os'", "'-c'"),
                arguments("python2.7mu -c 'import os'", "'-c'"),
                arguments("python3.11-dbg -c 'import os'", "'-c'"),
                arguments("perl5.36.0 -e 'exec \"curl\"'", "'-e'"),
                arguments("ruby3.1 -e 'exec \"curl\"'", "'-e'"),
                arguments("nodejs -e 'require(\"child_process\")'", "'-e'"),
                arguments("php8.2 -r 'system(\"curl\");'", "'-r'"),
                arguments("lua5.4 -e 'os.execute(\"curl\")'", "'-e'"),
                arguments("luajit-2.1 -e 'os.execute(\"curl\")'", "'-e'"),
                arguments("tclsh8.6", "reads its program from stdin"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("versionedNames")
    void should_match_versioned_names_of_wrappers_and_interpreters(String line, String expected) {
        assertThatThrownBy(() -> CommandPolicy.builder().build().check(line))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining(expected);
    }

    @Test
    void should_say_which_rule_refused_it_and_what_to_do() {
        CommandPolicy policy = CommandPolicy.builder().allow("ls").build();

        assertThatThrownBy(() -> policy.check("strace ls"))
                .hasMessage("command 'strace' is denied by the built-in policy: it is a debugger, tracer or profiler,"
                        + " which starts the program named in its arguments; no allow list can enable it. Run the"
                        + " command you want directly (e.g. 'grep x f' instead of \"sh -c 'grep x f'\").");
        assertThatThrownBy(() -> policy.check("/lib64/ld-linux-x86-64.so.2 /usr/bin/ls"))
                .hasMessageStartingWith("command '/lib64/ld-linux-x86-64.so.2' is denied by the built-in policy: it"
                        + " is a dynamic loader or an emulator, which runs the program file named in its arguments");
        assertThatThrownBy(() -> policy.check("cd work"))
                .hasMessageStartingWith("command 'cd' is denied by the built-in policy: it is a builtin that changes"
                        + " the shell's state")
                .hasMessageEndingWith("pass a working directory or variables through the tool's parameters"
                        + " instead.");
        // positive control
        assertThat(policy.check("ls -la").commands()).containsExactly("ls");
    }

    @Test
    void should_give_every_category_a_reason_and_members() {
        for (BuiltInDenyList.Category c : BuiltInDenyList.Category.values()) {
            assertThat(c.names()).as(c.name()).isNotEmpty();
            assertThat(c.reason()).as(c.name()).isNotBlank().doesNotEndWith(".");
            for (String n : c.names()) {
                assertThat(BuiltInDenyList.match(n)).as(n).isEqualTo(c);
            }
        }
        assertThat(CommandPolicy.builtInDeniedCommands()).isEqualTo(BuiltInDenyList.names())
                .contains("sh", "env", "xargs", "gdb", "strace", "ldd", "perf", "setsid", "xvfb-run", "entr")
                .doesNotContain("python3", "perl", "node", "ld", "curl");
        assertThat(BuiltInDenyList.isMultiCall("busybox")).isTrue();
        assertThat(BuiltInDenyList.isMultiCall("/usr/bin/toybox")).isTrue();
        assertThat(BuiltInDenyList.isMultiCall("env")).isFalse();
    }

    @Test
    void should_stay_fast_on_long_names_that_look_like_a_pattern_family() {
        String loaderLike = "ld-" + "a.".repeat(CommandPolicy.MAX_COMMAND_BYTES / 2 - 10) + "so";
        String debuggerLike = "a-".repeat(CommandPolicy.MAX_COMMAND_BYTES / 2 - 10) + "gdb";
        long start = System.nanoTime();

        for (String name : List.of(loaderLike, debuggerLike)) {
            assertThatThrownBy(() -> CommandPolicy.allowing("ls").check(name))
                    .hasMessageContaining("not in the policy's allow list");
        }

        // A bound against catastrophic backtracking (which takes hours on such names), not a measure of speed: generous
        // enough for any loaded machine.
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(60_000);
        // positive control: the same shapes at a real length are matched
        assertThat(BuiltInDenyList.match("ld-a.a.so")).isEqualTo(BuiltInDenyList.Category.LOADERS_AND_EMULATORS);
        assertThat(BuiltInDenyList.match("a-a-gdb")).isEqualTo(BuiltInDenyList.Category.DEBUGGERS_TRACERS_PROFILERS);
    }

    // ---------------------------------------------------------------- docs/command-policy.md lists the catalogue

    @Test
    void should_list_the_same_catalogue_in_the_documentation() throws IOException {
        List<Set<String>> rows = documentedCatalogue();
        BuiltInDenyList.Category[] categories = BuiltInDenyList.Category.values();

        assertThat(rows).hasSize(categories.length);
        for (int i = 0; i < categories.length; i++) {
            assertThat(rows.get(i)).as("row %d (%s)", i + 1, categories[i])
                    .containsExactlyInAnyOrderElementsOf(categories[i].names());
        }
    }

    /** The names in the second column of each row of the catalogue table, in order. */
    private static List<Set<String>> documentedCatalogue() throws IOException {
        Path doc = Path.of("..", "docs", "command-policy.md");
        if (!Files.exists(doc)) {
            doc = Path.of("docs", "command-policy.md");
        }
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        int start = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("### ") && lines.get(i).contains("The built-in catalogue")) {
                start = i;
                break;
            }
        }
        assertThat(start).as("a '### The built-in catalogue' section in " + doc).isNotNegative();
        List<Set<String>> rows = new ArrayList<>();
        Pattern code = Pattern.compile("`([^`]*)`");
        for (int i = start + 1; i < lines.size() && !lines.get(i).startsWith("#"); i++) {
            String line = lines.get(i);
            if (!line.startsWith("| ") || line.startsWith("| Category") || line.startsWith("|---")) {
                continue;
            }
            String[] cells = line.split(" \\| ");
            Set<String> names = new LinkedHashSet<>();
            Matcher m = code.matcher(cells[1]);
            while (m.find()) {
                names.addAll(List.of(m.group(1).trim().split("\\s+")));
            }
            rows.add(names);
        }
        return rows;
    }
}
