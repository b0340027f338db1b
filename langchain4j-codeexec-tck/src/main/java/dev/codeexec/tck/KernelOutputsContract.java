package dev.codeexec.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the Python cells of an engine with stateful cells (a kernel per workspace) leave under {@code out/} is reported
 * in their results, however the engine looks at {@code out/} between cells (an engine may skip its full collection
 * when it can tell {@code out/} is empty). The rule for code a cell leaves running (a thread, a child process) that
 * writes after the cell's reply: the file is in the result of the collection that finds it, at the latest the next one
 * once it is written; which of the two is a race, so both are accepted.
 *
 * <p>An interface of default tests, so that a backend's kernel test class can take it beside its own base class: it
 * supplies the engine and a workspace that live for each test.
 */
public interface KernelOutputsContract {

    /** A 1x1 PNG. */
    String PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    /** The engine under test, with a Python kernel per workspace. */
    Engine kernelEngine();

    /** The test's workspace of {@link #kernelEngine()}. */
    Workspace kernelWorkspace();

    /** Runs one Python cell in the test's workspace. */
    default CodeExecutionResult cell(String code) {
        return kernelEngine().executeCode(kernelWorkspace(),
                new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, Duration.ofSeconds(120)));
    }

    @Test
    default void should_report_nothing_when_a_cell_writes_nothing_and_a_file_once_a_cell_writes_one() {
        CodeExecutionResult quiet = cell("1+1");
        assertThat(quiet.output()).isEqualTo("2\n");
        assertThat(quiet.outputFiles()).isEmpty();

        CodeExecutionResult wrote = cell("import os\n"
                + "open(os.environ['OUTPUT_DIR'] + '/result.txt', 'w').write('42')\n"
                + "print('wrote')");

        assertThat(wrote.output()).isEqualTo("wrote\n");
        assertThat(wrote.outputFiles()).extracting(FileRef::name).containsExactly("out/result.txt");
        assertThat(text(wrote.outputFiles().get(0))).isEqualTo("42");
        // Earlier outputs stay in every later result, as on every engine: the next cell reports them too.
        assertThat(cell("1+1").outputFiles()).extracting(FileRef::name).containsExactly("out/result.txt");
    }

    @Test
    default void should_report_a_file_the_application_put_in_out_after_a_quiet_cell() {
        assertThat(cell("1+1").outputFiles()).isEmpty();
        kernelEngine().fs().putFiles(kernelWorkspace(), List.of(PutFile.of("out/from-app.txt", "app")));

        assertThat(cell("1+1").outputFiles()).extracting(FileRef::name).containsExactly("out/from-app.txt");
    }

    @Test
    default void should_save_and_report_an_image_a_cell_displays() {
        CodeExecutionResult shown = cell("import base64\n"
                + "from IPython.display import Image, display\n"
                + "display(Image(data=base64.b64decode('" + PNG_B64 + "'), format='png'))");

        assertThat(shown.exitCode()).as(shown.output()).isZero();
        assertThat(shown.outputFiles()).extracting(FileRef::name).containsExactly("out/display_1.png");
        byte[] pngSignature = {(byte) 0x89, 'P', 'N', 'G'};
        assertThat(Arrays.copyOf(shown.outputFiles().get(0).content(), 4)).isEqualTo(pngSignature);
    }

    @Test
    default void should_collect_a_file_a_thread_writes_after_the_reply_at_the_latest_with_the_next_collection() {
        cell("import os, threading\n"
                + "go = threading.Event()\n"
                + "def late():\n"
                + "    go.wait()\n"
                + "    open(os.environ['OUTPUT_DIR'] + '/late.txt', 'w').write('late')\n"
                + "writer = threading.Thread(target=late)\n"
                + "writer.start()");

        // The thread writes once this cell has let it go, before or after the look at out/: either result is right.
        CodeExecutionResult released = cell("go.set()");
        assertThat(released.outputFiles()).extracting(FileRef::name).isSubsetOf("out/late.txt");

        // Once it has written, the next collection has it.
        CodeExecutionResult after = cell("writer.join()");
        assertThat(after.outputFiles()).extracting(FileRef::name).containsExactly("out/late.txt");
        assertThat(text(after.outputFiles().get(0))).isEqualTo("late");
    }

    @Test
    default void should_collect_a_file_a_child_process_writes_after_the_reply_at_the_latest_with_the_next_collection() {
        cell("import subprocess\n"
                + "child = subprocess.Popen(['/bin/sh', '-c', 'while [ ! -e go ]; do sleep 0.01; done; "
                + "echo child > \"$OUTPUT_DIR/child.txt\"'])");

        CodeExecutionResult released = cell("open('go', 'w').close()");
        assertThat(released.outputFiles()).extracting(FileRef::name).isSubsetOf("out/child.txt");

        CodeExecutionResult after = cell("child.wait()");
        assertThat(after.outputFiles()).extracting(FileRef::name).containsExactly("out/child.txt");
        assertThat(text(after.outputFiles().get(0))).isEqualTo("child\n");
    }

    /** A file's content as UTF-8 ("" when the result carries no content). */
    static String text(FileRef f) {
        return f.content() == null ? "" : new String(f.content(), StandardCharsets.UTF_8);
    }
}
