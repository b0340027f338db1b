package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The allow list's helper on this host, without a sandbox: it starts an allowed program and refuses a denied one
 * (Landlock), fails closed on a rule it cannot add, and a run whose program it did not start is a setup failure.
 */
class ExecAllowListTest {

    private static final String ID = "/usr/bin/id";

    /** Linux x86_64 with the helper's Python and Landlock: what every test here that runs the helper needs. */
    private static void requireLandlock() {
        Requirements.require(Files.isExecutable(Path.of(ID)) && "Linux".equals(System.getProperty("os.name")),
                "Linux with " + ID);
        SandboxTesting.requireLandlock();
    }

    private static RunResult helper(List<String> rules, String... program) throws IOException, InterruptedException {
        requireLandlock();
        Process p = new ProcessBuilder(ExecAllowList.helperArgv(rules, List.of(program))).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue(); // a bound for a wedged helper, no timing margin
        return new RunResult(out, err, p.exitValue(), Duration.ZERO, false, false, false);
    }

    private static List<String> allowing(String... files) {
        List<String> rules = new java.util.ArrayList<>();
        for (String f : files) {
            rules.add("x:" + Path.of(f).toAbsolutePath());
        }
        String loader = ExecAllowList.elfInterpreter(Path.of(ID));
        rules.add("x:" + loader);
        rules.add("r:/etc");
        rules.add("r:/usr/lib");
        return rules;
    }

    @Test
    void should_start_an_allowed_program_and_refuse_a_denied_one() throws Exception {
        Requirements.require(ExecAllowList.elfInterpreter(Path.of(ID)) != null, "a dynamically linked " + ID);
        RunResult allowed = helper(allowing(ID), ID);
        assertThat(allowed.exitCode()).as(allowed.stderr()).isZero();
        assertThat(allowed.stdout()).contains("uid=");

        RunResult denied = helper(allowing("/usr/bin/true"), ID);
        assertThat(denied.exitCode()).isEqualTo(126);
        assertThat(denied.stdout()).isEmpty();
        assertThat(denied.stderr()).contains("Permission denied");
        assertThat(ExecAllowList.check(denied)).isSameAs(denied); // the program's refusal, not a setup failure
    }

    @Test
    void should_fail_closed_on_a_rule_it_cannot_add() throws Exception {
        RunResult r = helper(List.of("q:/etc"), ID);
        assertThat(r.exitCode()).isEqualTo(ExecAllowList.GUARD_FAILED);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr()).startsWith(ExecAllowList.MARKER);
        assertThatThrownBy(() -> ExecAllowList.check(r)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("bad rule").hasMessageContaining("Nothing ran");

        RunResult none = helper(List.of("r:/etc"));
        assertThat(none.exitCode()).isEqualTo(ExecAllowList.GUARD_FAILED);
        assertThat(none.stderr()).contains("no program given");
    }

    @Test
    void should_let_execute_the_allowed_files_and_read_no_program_directory() throws IOException {
        requireLandlock();
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/ls")), "/usr/bin/ls");
        ExecAllowList list = ExecAllowList.forEngine(CommandPolicy.builder().allow("ls").build(),
                PermissionProfile.workspaceWrite(), SandboxPlatform.LINUX_BWRAP, true);
        String ls = Path.of("/usr/bin/ls").toRealPath().toString();
        String sh = Path.of("/bin/sh").toRealPath().toString();
        String loader = Path.of(ExecAllowList.elfInterpreter(Path.of(ls))).toRealPath().toString();
        assertThat(list.executables()).containsExactlyInAnyOrder(ls, sh, loader);

        List<String> argv = list.wrap(List.of(ls, "-l"), Path.of("/srv/ws"));
        assertThat(argv.subList(argv.size() - 3, argv.size())).containsExactly("--", ls, "-l");
        List<String> rules = argv.subList(5, argv.size() - 3);
        assertThat(rules).filteredOn(r -> r.startsWith("x:")).hasSize(3);
        assertThat(rules).contains("r:/srv/ws", "r:/tmp", "r:/etc").doesNotContain("r:/", "r:/usr", "r:/usr/lib");
        for (String dir : List.of("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/", "/usr/libexec/", "/usr/lib/jvm/",
                "/usr/lib/gcc/", "/usr/local/bin/")) {
            assertThat(rules).as("read rules under " + dir).noneMatch(r -> r.startsWith("r:" + dir));
        }
        // No read rule reaches a program: every file a read rule names directly is a library or data.
        assertThat(rules).filteredOn(r -> r.startsWith("r:/usr/lib/x86_64-linux-gnu/")).isNotEmpty()
                .allSatisfy(r -> assertThat(ExecAllowList.elfInterpreter(Path.of(r.substring(2))) == null
                        || r.contains(".so")).as(r).isTrue());
    }

    @Test
    void should_refuse_an_allowed_command_that_leads_to_a_multi_call_binary() throws IOException {
        requireLandlock();
        Path dir = Files.createTempDirectory("multi-call");
        try {
            Path busybox = Files.writeString(dir.resolve("busybox"), "#!/bin/sh\n");
            Path tool = Files.writeString(dir.resolve("tool"), "#!/bin/sh\n");
            for (Path p : List.of(busybox, tool)) {
                Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            Path ls = Files.createSymbolicLink(dir.resolve("ls"), busybox);
            assertThatThrownBy(() -> ExecAllowList.forEngine(CommandPolicy.builder().allow(ls.toString()).build(),
                    PermissionProfile.workspaceWrite(), SandboxPlatform.LINUX_BWRAP, true))
                    .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("multi-call");
            assertThat(ExecAllowList.forEngine(CommandPolicy.builder().allow(tool.toString()).build(),
                    PermissionProfile.workspaceWrite(), SandboxPlatform.LINUX_BWRAP, true).executables())
                    .contains(tool.toRealPath().toString());
        } finally {
            dev.codeexec.workspace.FileTrees.deleteTree(dir);
        }
    }

    @Test
    void should_read_the_elf_interpreter_of_a_program_and_none_of_a_script() throws IOException {
        Requirements.require(Files.isExecutable(Path.of(ID)), ID);
        assertThat(ExecAllowList.elfInterpreter(Path.of(ID))).startsWith("/").contains("ld-");
        Path script = Files.createTempFile("script", ".sh");
        try {
            Files.writeString(script, "#!/bin/sh\necho hi\n");
            assertThat(ExecAllowList.elfInterpreter(script)).isNull();
        } finally {
            Files.delete(script);
        }
    }

    @Test
    void should_resolve_a_bare_name_on_the_clean_path_to_real_files_and_skip_relative_paths() {
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/ls")), "/usr/bin/ls");
        assertThat(ExecAllowList.resolve("ls")).isNotEmpty().allSatisfy(f -> assertThat(f).endsWith("/ls"));
        assertThat(ExecAllowList.resolve("./ls")).isEmpty();
        assertThat(ExecAllowList.resolve("no-such-command-here")).isEmpty();
    }
}
