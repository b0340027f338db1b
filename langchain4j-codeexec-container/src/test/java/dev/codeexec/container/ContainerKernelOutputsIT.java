package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a cell leaves under {@code out/} is reported whether or not the Engine API is asked: an empty {@code out/} is
 * seen through the kernel's relay ({@link KernelOutputsFS}), anything else is collected through the archive API as
 * before. Code a cell leaves running that writes after the cell's reply: the file is in the result of the collection
 * that finds it, at the latest the next one once it is written.
 */
class ContainerKernelOutputsIT {

    /** A 1x1 PNG. */
    private static final String PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
            + "hKmMIQAAAABJRU5ErkJggg==";

    private static ContainerEngine engine;
    private Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireKernelImage();
        engine = ContainerTesting.kernelEngine().pythonKernel(KernelOptions.defaults()).build();
    }

    @AfterAll
    static void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    @BeforeEach
    void createWorkspace() {
        ws = engine.manager().createWorkspace("kernel-outputs", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void removeWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

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
        assertThat(wrote.outputFiles().get(0).contentAsString()).isEqualTo("42");
        assertThat(cell("1+1").outputFiles()).extracting(FileRef::name).containsExactly("out/result.txt");
    }

    @Test
    void should_report_a_file_the_application_put_in_out_after_a_quiet_cell() {
        assertThat(cell("1+1").outputFiles()).isEmpty();
        engine.fs().putFiles(ws, List.of(PutFile.of("out/from-app.txt", "app")));

        assertThat(cell("1+1").outputFiles()).extracting(FileRef::name).containsExactly("out/from-app.txt");
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

        // The thread writes once this cell has let it go, before or after the look at out/: either result is right.
        CodeExecutionResult released = cell("go.set()");
        assertThat(released.outputFiles()).extracting(FileRef::name).isSubsetOf("out/late.txt");

        CodeExecutionResult after = cell("writer.join()");
        assertThat(after.outputFiles()).extracting(FileRef::name).containsExactly("out/late.txt");
        assertThat(after.outputFiles().get(0).content()).isEqualTo("late".getBytes(StandardCharsets.UTF_8));
    }

    private CodeExecutionResult cell(String code) {
        return ContainerTesting.cell(engine, ws, code, Duration.ofSeconds(120));
    }
}
