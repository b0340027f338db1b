package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Cells in a real ipykernel: state, streams, values, errors, rich outputs, stdin, environment, caps. */
class JupyterCellsIT extends KernelFixture {

    JupyterCellsIT() {
        super("cells", () -> {
            Map<String, String> host = new HashMap<>(System.getenv());
            host.put("MY_API_TOKEN", "host-secret-3f9a");
            return JupyterEngine.builder().hostEnvironment(host).build();
        });
    }

    @Test
    void should_keep_variables_and_imports_across_cells() {
        CodeExecutionResult first = cell(engine, ws, "import math\nradius = 2");
        CodeExecutionResult second = cell(engine, ws, "round(math.pi * radius ** 2, 3)");

        assertThat(first.exitCode()).isZero();
        assertThat(first.output()).isEmpty();
        assertThat(second.exitCode()).isZero();
        assertThat(second.output()).isEqualTo("12.566\n");
    }

    @Test
    void should_return_stdout_stderr_and_the_value_in_order() {
        CodeExecutionResult r = cell(engine, ws, "import sys\nprint('to stdout')\nsys.stdout.flush()\n"
                + "print('to stderr', file=sys.stderr)\nsys.stderr.flush()\n6 * 7");

        assertThat(r.exitCode()).isZero();
        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).isEqualTo("to stdout\nto stderr\n42\n");
    }

    @Test
    void should_return_the_traceback_and_a_failure_when_the_cell_raises() {
        CodeExecutionResult r = cell(engine, ws, "def f(d):\n    return 1 / d\nprint('before')\nf(0)");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).startsWith("before\n").contains("ZeroDivisionError").contains("division by zero")
                .contains("----> 4 f(0)").doesNotContain("\u001b[");
        assertThat(cell(engine, ws, "print('still here')").output()).isEqualTo("still here\n");
    }

    @Test
    void should_run_the_cell_sent_right_after_a_failed_or_interrupted_one() {
        // Asked to stop on errors, ipykernel aborts requests that arrive until its event loop turns after an error,
        // which may be after the idle status went out: the next cell must run all the same.
        for (int i = 0; i < 5; i++) {
            assertThat(cell(engine, ws, "raise RuntimeError('fails')").exitCode()).isEqualTo(1);
            assertThat(cell(engine, ws, "print('ran', " + i + ")").output()).as("after an error, attempt " + i)
                    .isEqualTo("ran " + i + "\n");
            assertThat(cell(engine, ws, "while True:\n    pass", Duration.ofMillis(300)).timedOut()).isTrue();
            assertThat(cell(engine, ws, "print('ran', " + i + ")").output()).as("after an interrupt, attempt " + i)
                    .isEqualTo("ran " + i + "\n");
        }
    }

    @Test
    void should_not_busy_wait_while_cells_run() {
        cell(engine, ws, "1");
        long before = engine.kernel(ws).readerRounds()[0];

        for (int i = 0; i < 50; i++) {
            assertThat(cell(engine, ws, "1 + 1").output()).isEqualTo("2\n");
        }

        // A handful of rounds per cell (send, then each message); a spinning reader turns hundreds.
        assertThat(engine.kernel(ws).readerRounds()[0] - before).as("reader rounds for 50 cells").isLessThan(50 * 50);
    }

    @Test
    void should_stop_at_the_first_failing_block_and_run_other_languages_as_scripts() {
        CodeExecutionResult r = engine.executeCode(ws, new CodeExecutionInput(List.of(
                CodeBlock.of("python", "n = 21\nopen('n.txt', 'w').write(str(n * 2))"),
                CodeBlock.of("bash", "echo from-bash $(cat ../work/n.txt)"),
                CodeBlock.of("py", "raise ValueError('stop here')"),
                CodeBlock.of("python", "print('never')")), null, Duration.ofSeconds(60)));

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.output()).contains("2\n").contains("from-bash 42").contains("ValueError: stop here")
                .doesNotContain("never");
        assertThatThrownBy(() -> engine.executeCode(ws, new CodeExecutionInput(List.of(
                CodeBlock.of("python", "print('not run')"), CodeBlock.of("cobol", "DISPLAY 'x'.")), null, null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("cobol");
    }

    @Test
    void should_save_a_matplotlib_chart_written_to_out_and_one_displayed_inline() throws Exception {
        JupyterTesting.requireMatplotlib();
        CodeExecutionResult saved = cell(engine, ws, """
                import matplotlib
                matplotlib.use('Agg')
                import matplotlib.pyplot as plt
                fig, ax = plt.subplots()
                ax.plot([1, 2, 3], [2, 4, 1])
                fig.savefig('../out/chart.png')
                print('saved')
                """);
        assertThat(saved.exitCode()).as(saved.output()).isZero();
        assertThat(saved.outputFiles()).extracting(FileRef::name).contains("out/chart.png");
        FileRef chart = saved.outputFiles().stream().filter(f -> f.name().equals("out/chart.png")).findFirst()
                .orElseThrow();
        assertThat(chart.mimeType()).isEqualTo("image/png");
        assertThat(chart.content()).startsWith(0x89, 'P', 'N', 'G');

        CodeExecutionResult shown = cell(engine, ws, """
                %matplotlib inline
                import matplotlib.pyplot as plt
                plt.bar(['a', 'b'], [3, 5])
                plt.show()
                """);
        assertThat(shown.exitCode()).as(shown.output()).isZero();
        assertThat(shown.output()).contains("[display saved as out/display_1.png (image/png,");
        FileRef inline = shown.outputFiles().stream().filter(f -> f.name().equals("out/display_1.png")).findFirst()
                .orElseThrow();
        assertThat(inline.content()).startsWith(0x89, 'P', 'N', 'G');
        assertThat(Files.size(Path.of(ws.path(), "out/display_1.png"))).isGreaterThan(1000);
    }

    @Test
    void should_save_svg_and_html_displays_and_keep_a_values_text() {
        CodeExecutionResult r = cell(engine, ws, """
                from IPython.display import display, SVG, HTML
                display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'))
                display(HTML('<b>bold</b>'))
                {'value': 1}
                """);

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("out/display_1.svg (image/svg+xml").contains("out/display_2.html (text/html")
                .contains("{'value': 1}");
        assertThat(r.outputFiles()).extracting(FileRef::name).contains("out/display_1.svg", "out/display_2.html");
        FileRef html = r.outputFiles().stream().filter(f -> f.name().equals("out/display_2.html")).findFirst()
                .orElseThrow();
        assertThat(html.contentAsString()).isEqualTo("<b>bold</b>");
    }

    @Test
    void should_answer_code_that_reads_stdin_with_a_clear_error_instead_of_waiting() {
        CodeExecutionResult asked = cell(engine, ws, "name = input('Your name? ')", Duration.ofSeconds(120));

        assertThat(asked.timedOut()).isFalse();
        assertThat(asked.exitCode()).isEqualTo(1);
        assertThat(asked.output()).contains("StdinNotImplementedError").contains("this kernel has no standard input");

        CodeExecutionResult raw = cell(engine, ws, "import sys\nprint(repr(sys.stdin.read()))",
                Duration.ofSeconds(120));
        assertThat(raw.timedOut()).isFalse();
        assertThat(raw.output()).isEqualTo("''\n");
    }

    @Test
    void should_run_from_work_with_the_workspace_variables_and_without_host_secrets() {
        CodeExecutionResult r = cell(engine, ws, """
                import os
                print(os.getcwd() == os.path.join(os.environ['WORKSPACE_DIR'], 'work'))
                print(os.environ['HOME'].startswith(os.environ['WORKSPACE_DIR']))
                print(os.environ['OUTPUT_DIR'].endswith('/out'))
                print('MY_API_TOKEN' in os.environ)
                """);

        assertThat(r.output()).isEqualTo("True\nTrue\nTrue\nFalse\n");
    }

    @Test
    void should_keep_two_workspaces_apart_even_when_their_cells_run_at_once() throws Exception {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<CodeExecutionResult> a = pool.submit(() -> cell(engine, ws, "who = 'first'"));
            Future<CodeExecutionResult> b = pool.submit(() -> cell(engine, other, "who = 'second'"));
            assertThat(a.get().exitCode()).isZero();
            assertThat(b.get().exitCode()).isZero();
        } finally {
            pool.shutdownNow();
        }

        assertThat(cell(engine, ws, "who").output()).isEqualTo("'first'\n");
        assertThat(cell(engine, other, "who").output()).isEqualTo("'second'\n");
        assertThat(engine.kernelConnectionFile(ws)).isNotEqualTo(engine.kernelConnectionFile(other));
        assertThat(cell(engine, other, "import os\nos.getcwd()").output()).contains(other.id())
                .doesNotContain(ws.id());
    }

    @Test
    void should_cap_a_flood_of_output_and_mark_the_result_truncated() {
        JupyterEngine small = JupyterEngine.builder().maxOutputBytes(64 * 1024).build();
        try {
            Workspace w = small.manager().createWorkspace("flood", WorkspacePolicy.DEFAULT);
            CodeExecutionResult r = cell(small, w, "for i in range(200000):\n    print('line', i)\nprint('end')",
                    Duration.ofSeconds(120));

            assertThat(r.exitCode()).isZero();
            assertThat(r.truncated()).isTrue();
            assertThat(r.output().length()).isLessThan(64 * 1024 + 200);
            assertThat(r.output()).startsWith("line 0\nline 1\n").contains("[output truncated:");
            assertThat(cell(small, w, "print('after')").output()).isEqualTo("after\n");
        } finally {
            small.close();
        }
    }

    @Test
    void should_save_displays_without_overwriting_files_already_in_out() throws Exception {
        Files.writeString(Path.of(ws.path(), "out/display_1.svg"), "mine");

        CodeExecutionResult r = cell(engine, ws, "from IPython.display import SVG\n"
                + "SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>')");

        assertThat(r.output()).contains("out/display_2.svg");
        assertThat(Files.readString(Path.of(ws.path(), "out/display_1.svg"))).isEqualTo("mine");
    }
}
