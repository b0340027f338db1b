package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The run's bootstrap and argv: a script that arrives cut is not run; the argv keeps data out of the scripts. */
class PodScriptsTest {

    @Test
    void should_keep_the_wrapper_ascii_so_that_its_length_in_characters_is_its_length_in_bytes() {
        assertThat(PodScripts.RUN.chars().allMatch(c -> c < 128)).isTrue();
        assertThat(new String(PodScripts.runPreamble(), StandardCharsets.US_ASCII))
                .isEqualTo(PodScripts.RUN.length() + "\n" + PodScripts.RUN);
    }

    @Test
    void should_sweep_orphans_only_under_the_init_the_pods_run() {
        // killorphans recognises PID 1 by its command line: the pod spec's init must be that very one.
        assertThat(PodSpecs.INIT).containsExactly("sh", "-c", dev.codeexec.spi.ContainerShell.INIT);
        assertThat(PodScripts.KILL_TREE).contains("'sh-c" + dev.codeexec.spi.ContainerShell.INIT + "'");
        // The kill script quotes BOOT's text whole in single quotes, and it is BOOT's second line.
        assertThat(PodScripts.BOOT_READ).doesNotContain("'").doesNotContain("\n");
        assertThat(PodScripts.BOOT).isEqualTo(": " + PodScripts.RUN_MARK_FIRST + PodScripts.RUN_MARK_REST + "\n"
                + PodScripts.BOOT_READ);
        assertThat(PodScripts.KILL_TREE).doesNotContain(PodScripts.RUN_MARK_FIRST + PodScripts.RUN_MARK_REST);
    }

    @Test
    void should_run_a_script_that_arrived_whole() throws Exception {
        String script = "echo ran \"$1\"\n";
        Outcome o = boot(script.length() + "\n" + script, "arg");
        assertThat(o.code).isZero();
        assertThat(o.out).isEqualTo("ran arg\n");
    }

    @Test
    void should_run_nothing_when_the_script_arrived_cut() throws Exception {
        // The stream broke inside the script: its first line alone would run the program unsupervised.
        String script = "echo ran \"$1\"\necho rest\n";
        Outcome o = boot(script.length() + "\n" + script.substring(0, script.indexOf("echo rest")), "arg");
        assertThat(o.code).isEqualTo(125);
        assertThat(o.out).isEmpty();
    }

    @Test
    void should_put_the_launcher_in_front_and_the_data_after_the_script() {
        List<String> args = new ArrayList<>(List.of("/c", "/r", PodScripts.STDIN_RAW, "/", "- - -", "0", "-", "-", "-",
                "-", "-", "env", "-i", "$(reboot)"));
        List<String> argv = PodScripts.runArgv(PodScripts.Reaper.PYTHON, args);
        assertThat(argv.subList(0, 3)).isEqualTo(PodScripts.Reaper.PYTHON.launcher());
        assertThat(argv.subList(3, 7)).containsExactly("sh", "-c", PodScripts.BOOT, "sh");
        assertThat(argv.subList(7, argv.size())).isEqualTo(args);
        assertThat(PodExecChannel.argvFor(ExecSocket.Protocol.V4, argv).get(9)).isEqualTo(PodScripts.STDIN_FRAMED);
        assertThat(PodScripts.runArgv(PodScripts.Reaper.NONE, args).get(0)).isEqualTo("sh");
        List<String> built = PodScripts.runArgv(PodScripts.Reaper.PYTHON, "/c", "/r", "/", "- - -", 0, null,
                Map.of("K", "$(reboot)"), List.of("prog", "a b"));
        assertThat(built.subList(7, built.size())).containsExactly("/c", "/r", PodScripts.STDIN_RAW, "/", "- - -",
                "0", "-", "-", "-", "-", "-", "env", "-i", "K=$(reboot)", "prog", "a b");
    }

    private record Outcome(int code, String out) {
    }

    private static Outcome boot(String stdin, String arg) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", PodScripts.BOOT, "sh", arg).redirectErrorStream(true).start();
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.US_ASCII));
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Outcome(p.exitValue(), out.toString(StandardCharsets.UTF_8));
    }
}
