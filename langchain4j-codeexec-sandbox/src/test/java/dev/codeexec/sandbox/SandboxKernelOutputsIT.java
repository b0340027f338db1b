package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.tck.KernelOutputsContract;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TCK's {@link KernelOutputsContract} on the sandbox's kernel, where an empty {@code out/} is seen without pausing
 * the kernel ({@link SettledOutputs}) and anything else is collected with the kernel paused, as before; and a cell that
 * turns {@code out/} into a link to the host gets no host file reported.
 */
class SandboxKernelOutputsIT extends AbstractPythonKernelIT implements KernelOutputsContract {

    @TempDir(factory = HostTempDirs.class)
    Path host;

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

    @Override
    public SandboxEngine kernelEngine() {
        return engine;
    }

    @Override
    public Workspace kernelWorkspace() {
        return ws;
    }

    @Override
    public CodeExecutionResult cell(String code) {
        return super.cell(code);
    }

    private static String text(FileRef f) {
        return KernelOutputsContract.text(f);
    }
}
