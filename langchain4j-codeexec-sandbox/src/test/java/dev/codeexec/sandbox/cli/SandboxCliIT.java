package dev.codeexec.sandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.testing.Requirements;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxCliIT {

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeAll
    static void requireSandbox() {
        Requirements.requireCommand("bwrap");
    }

    private int cli(String... args) {
        return SandboxCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of("PATH", "/usr/bin:/bin", "LANG", "C.UTF-8", "API_KEY", "sk-secret"), tmp);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void should_stream_output_and_return_the_command_exit_code() {
        int rc = cli("--", "/bin/sh", "-c", "pwd; echo oops >&2; env; exit 7");
        assertThat(rc).isEqualTo(7);
        assertThat(out()).containsPattern("/workspaces/cli-[^/]+/work\n").contains("LANG=C.UTF-8")
                .doesNotContain("sk-secret");
        assertThat(err()).isEqualTo("oops\n");
    }

    @Test
    void should_return_124_on_timeout() {
        assertThat(cli("--timeout", "0.5", "--", "/bin/sh", "-c", "echo started; sleep 60")).isEqualTo(124);
        assertThat(out()).isEqualTo("started\n");
        assertThat(err()).contains("timed out");
    }

    @Test
    void should_return_125_with_reason_when_the_sandbox_cannot_be_set_up() {
        assertThat(cli("--read", tmp.resolve("missing").toString(), "--", "true")).isEqualTo(125);
        assertThat(err()).contains("does not exist");
        err.reset();
        assertThat(cli("--network", "sometimes", "--", "true")).isEqualTo(125);
        assertThat(err()).contains("'sometimes'");
        err.reset();
        assertThat(cli("--profile", "workspace-write")).isEqualTo(125);
        assertThat(err()).contains("no command").contains("usage:");
    }

    @Test
    void should_apply_grants_denials_environment_and_workspace() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Files.writeString(data.resolve("in.txt"), "input");
        Files.writeString(data.resolve("secret.txt"), "hidden");
        Path ws = Files.createDirectories(tmp.resolve("ws"));
        if ("root".equals(System.getProperty("user.name"))) {
            // An operator's directory belongs to an unprivileged user; programs run as that user, never as root.
            Files.setAttribute(ws, "unix:uid", 99999);
        }
        int rc = cli("--workspace", "ws", "--read", "data", "--deny", "data/secret.txt", "--env", "none",
                "--set", "GREETING=hi", "--network", "restricted", "--",
                "/bin/sh", "-c", "cat ../../data/in.txt; cat ../../data/secret.txt; echo $GREETING > ../out/g.txt;"
                        + " echo x > ../../data/new.txt");
        assertThat(rc).isNotZero();
        assertThat(out()).contains("input").doesNotContain("hidden");
        assertThat(Files.readString(ws.resolve("out/g.txt"))).isEqualTo("hi\n");
        assertThat(data.resolve("new.txt")).doesNotExist();
        assertThat(ws.resolve("work")).isDirectory();
    }

    @Test
    void should_leave_no_route_to_a_denied_program_whose_files_are_hidden() throws Exception {
        // The policy names the files of its denied programs; hiding them (here with --deny, the rule the engine applies
        // to every hidden path) closes every route at once: the dynamic loader, a plain run, a copy, an interpreter.
        Set<Path> files = CommandPolicy.builder().deny("touch").build()
                .deniedExecutables("/usr/local/bin:/usr/bin:/bin");
        String loader = null;
        for (String l : List.of("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")) {
            loader = loader == null && Files.exists(Path.of(l)) ? l : loader;
        }
        Requirements.require(loader != null, "the glibc dynamic loader");
        Requirements.requireCommand("python3");
        assertThat(files).contains(Path.of("/usr/bin/touch").toRealPath());
        String routes = loader + " /usr/bin/touch a; touch b; cp /usr/bin/touch c && ./c d;"
                + " python3 -c 'import subprocess; subprocess.run([\"touch\", \"e\"])'; true";

        List<String> hidden = new ArrayList<>(List.of("--workspace", "hidden"));
        for (Path f : files) {
            hidden.addAll(List.of("--deny", f.toString()));
        }
        hidden.addAll(List.of("--", "/bin/sh", "-c", routes));
        Path hiddenWs = unprivileged(Files.createDirectories(tmp.resolve("hidden")));
        cli(hidden.toArray(String[]::new));
        // positive control: without the hidden files every route runs the program
        Path openWs = unprivileged(Files.createDirectories(tmp.resolve("open")));
        cli("--workspace", "open", "--", "/bin/sh", "-c", routes);

        for (String made : List.of("a", "b", "c", "d", "e")) {
            assertThat(hiddenWs.resolve("work").resolve(made)).as("hidden: " + made + "; " + err()).doesNotExist();
            assertThat(openWs.resolve("work").resolve(made)).as("open: " + made + "; " + err()).exists();
        }
    }

    /** A workspace directory the CLI accepts as root: one that belongs to an unprivileged user, whom programs run as. */
    private static Path unprivileged(Path dir) throws java.io.IOException {
        if ("root".equals(System.getProperty("user.name"))) {
            Files.setAttribute(dir, "unix:uid", 4242);
        }
        return dir;
    }

    @Test
    void should_refuse_a_workspace_directory_of_root_when_programs_would_have_to_run_as_root() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "only a root JVM changes the program's user");
        Files.createDirectories(tmp.resolve("rootws"));
        assertThat(cli("--workspace", "rootws", "--", "/bin/sh", "-c", "id -u")).isEqualTo(125);
        assertThat(err()).contains("belongs to root").contains("chown");
        // Positive control: the same directory given to an unprivileged user runs as that user.
        Files.setAttribute(tmp.resolve("rootws"), "unix:uid", 4242);
        err.reset();
        assertThat(cli("--workspace", "rootws", "--", "/bin/sh", "-c", "id -u; touch ../out/made")).isZero();
        assertThat(out()).isEqualTo("4242\n");
        assertThat((Integer) Files.getAttribute(tmp.resolve("rootws/out/made"), "unix:uid")).isEqualTo(4242);
    }
}
