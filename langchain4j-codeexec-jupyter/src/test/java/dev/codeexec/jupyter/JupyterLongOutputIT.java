package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Output far over the cap on the Jupyter engine: a cell and a run both keep their real last lines; a run's whole
 * stream is saved in its folder.
 */
class JupyterLongOutputIT extends KernelFixture {

    private static final int CAP = 64 * 1024;

    JupyterLongOutputIT() {
        super("long", () -> JupyterEngine.builder().maxOutputBytes(CAP).build());
    }

    @Test
    void should_keep_the_last_line_of_a_cell_when_it_prints_twenty_times_the_cap() {
        // About 1.3 MB, more than four times the cap (the bound on what waits in the kernel client's queue).
        CodeExecutionResult r = cell(engine, ws, "for i in range(200000):\n    print(i)\nprint('FINAL: done')",
                Duration.ofSeconds(120));

        assertThat(r.truncated()).isTrue();
        assertThat(r.output()).startsWith("0\n1\n2\n").contains("[output truncated: ")
                .endsWith("199998\n199999\nFINAL: done\n");
        assertThat(r.output().length()).isLessThan(CAP + 200);
    }

    @Test
    void should_keep_the_last_line_and_save_the_whole_stream_when_a_run_prints_twenty_times_the_cap() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "seq 0 199999; echo 'FINAL: done'").timeout(Duration.ofSeconds(60)).build());

        assertThat(r.stdout()).startsWith("0\n1\n").endsWith("199999\nFINAL: done\n");
        assertThat(r.stdoutFile().complete()).isTrue();
        String saved = new String(engine.fs().readFile(ws, r.stdoutFile().path(), 0, 4 << 20).content(),
                java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(saved).startsWith("0\n1\n").contains("\n100000\n").endsWith("199999\nFINAL: done\n");
        assertThat((long) saved.length()).isEqualTo(r.stdoutFile().totalBytes());
    }
}
