package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a cell leaves under {@code out/} is reported whether or not the kernel had to be paused to collect it: an empty
 * {@code out/} is seen without a pause ({@link SettledOutputs}), anything else is collected with the kernel paused, as
 * before. The rule for code a cell leaves running (a thread, a child process) that writes after the cell's reply: the
 * file is in the result of the collection that finds it, at the latest the next one once it is written.
 */
class SandboxKernelOutputsIT extends AbstractPythonKernelIT {

    /** A 1x1 PNG. */
    private static final String PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
            + "hKmMIQAAAABJRU5ErkJggg==";

    @TempDir(factory = HostTempDirs.class)
    Path host;

    @Test
    void should_report_nothing_when_a_cell_writes_nothing_and_a_file_once_a_cell_writes_one() {
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
    void should_save_and_report_an_image_a_cell_displays() {
        CodeExecutionResult shown = cell("import base64\n"
                + "from IPython.display import Image, display\n"
                + "display(Image(data=base64.b64decode('" + PNG_B64 + "'), format='png'))");

        assertThat(shown.exitCode()).as(shown.output()).isZero();
        assertThat(shown.outputFiles()).extracting(FileRef::name).containsExactly("out/display_1.png");
        byte[] pngSignature = {(byte) 0x89, 'P', 'N', 'G'};
        assertThat(Arrays.copyOf(shown.outputFiles().get(0).content(), 4)).isEqualTo(pngSignature);
    }

    @Test
    void should_collect_a_file_a_thread_writes_after_the_reply_at_the_latest_with_the_next_collection() {
        cell("import os, threading\n"
                + "go = threading.Event()\n"
                + "def late():\n"
                + "    go.wait()\n"
                + "    open(os.environ['OUTPUT_DIR'] + '/late.txt', 'w').write('late')\n"
                + "writer = threading.Thread(target=late)\n"
                + "writer.start()");

        // The thread writes once this cell has let it go, before or after the cell's reply: either result is right.
        CodeExecutionResult released = cell("go.set()");
        assertThat(released.outputFiles()).extracting(FileRef::name).isSubsetOf("out/late.txt");

        // Once it has written, the next collection has it.
        CodeExecutionResult after = cell("writer.join()");
        assertThat(after.outputFiles()).extracting(FileRef::name).containsExactly("out/late.txt");
        assertThat(text(after.outputFiles().get(0))).isEqualTo("late");
    }

    @Test
    void should_collect_a_file_a_child_process_writes_after_the_reply_at_the_latest_with_the_next_collection() {
        cell("import subprocess\n"
                + "child = subprocess.Popen(['/bin/sh', '-c', 'while [ ! -e go ]; do sleep 0.01; done; "
                + "echo child > \"$OUTPUT_DIR/child.txt\"'])");

        CodeExecutionResult released = cell("open('go', 'w').close()");
        assertThat(released.outputFiles()).extracting(FileRef::name).isSubsetOf("out/child.txt");

        CodeExecutionResult after = cell("child.wait()");
        assertThat(after.outputFiles()).extracting(FileRef::name).containsExactly("out/child.txt");
        assertThat(text(after.outputFiles().get(0))).isEqualTo("child\n");
    }

    /**
     * A cell that swaps {@code out/} for a link to a host directory gets no host file reported: the link is never
     * followed by the check without a pause, and the paused collection keeps its own rules. Positive control: the
     * same file written into the real {@code out/} is reported.
     */
    @Test
    void should_not_report_host_files_when_a_cell_turns_out_into_a_link() throws IOException {
        Path target = Files.createDirectories(host.resolve("host-out"));
        Files.writeString(target.resolve("secret.txt"), "HOST-SECRET");

        CodeExecutionResult swapped = cell("import os\n"
                + "out = os.environ['OUTPUT_DIR']\n"
                + "os.rmdir(out)\n"
                + "os.symlink('" + target + "', out)\n"
                + "print('swapped')");
        assertThat(swapped.output()).isEqualTo("swapped\n");
        assertThat(swapped.outputFiles()).noneMatch(f -> text(f).contains("HOST-SECRET"));
        OutputManifest direct = engine.fs().collectOutputs(ws, OutputSpec.DEFAULT);
        assertThat(direct.files()).noneMatch(f -> text(f).contains("HOST-SECRET"));

        CodeExecutionResult restored = cell("os.remove(out)\n"
                + "os.mkdir(out)\n"
                + "open(out + '/secret.txt', 'w').write('HOST-SECRET')");
        assertThat(restored.outputFiles()).extracting(FileRef::name).containsExactly("out/secret.txt");
        assertThat(text(restored.outputFiles().get(0))).isEqualTo("HOST-SECRET");
    }

    private static String text(FileRef f) {
        return f.content() == null ? "" : new String(f.content(), StandardCharsets.UTF_8);
    }
}
