package dev.codeexec.tck;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.OutputLimit;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.FileRef;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fixture of the engine contract and its workspace-files half: paths that escape, links out of the workspace,
 * {@code stat}, binary round trips, inputs and outputs, listings and read windows. Backends extend
 * {@link EngineContractTest}, which adds the runs.
 */
public abstract class EngineFilesContract {

    protected Engine engine;
    protected Workspace ws;

    /** A fresh engine for one test; closed after it. */
    protected abstract Engine createEngine();

    @BeforeEach
    void createWorkspace() {
        engine = createEngine();
        ws = engine.manager().createWorkspace("contract", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    protected RunResult run(String... shellLine) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", String.join(" ", shellLine))
                .build());
    }

    // ---- files ----

    @Test
    void should_refuse_paths_that_escape() {
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("../x", "x"))))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("/etc/passwd", "x"))))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.fs().readFile(ws, "work/../../etc/passwd", 0, 100))
                .isInstanceOf(PathEscapeException.class);
        // Positive control: the same call with a relative path works.
        engine.fs().putFiles(ws, List.of(PutFile.of("work/x", "x")));
        assertThat(engine.fs().readFile(ws, "work/x", 0, 100).contentAsString()).isEqualTo("x");
    }

    @Test
    void should_not_read_through_link_out_of_workspace() {
        RunResult r = run("ln -s /etc/passwd out/link && ln -s ../runs/ok.txt out/inside && echo ok > runs/ok.txt");
        assertThat(r.exitCode()).isZero();
        List<String> collected = engine.fs().collect(ws, List.of("out/**")).stream().map(FileRef::name).toList();
        assertThat(collected).doesNotContain("out/link");
        assertThat(collected).contains("out/inside");
        List<String> outputs = engine.fs().collectOutputs(ws, OutputSpec.DEFAULT).files().stream()
                .map(FileRef::name).toList();
        assertThat(outputs).doesNotContain("out/link").contains("out/inside");
        assertThatThrownBy(() -> engine.fs().readFile(ws, "out/link", 0, 100))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("out/link/x", "x"))))
                .isInstanceOf(CodeExecException.class);
    }

    @Test
    void should_stat_files_directories_and_missing_paths() {
        engine.fs().putFiles(ws, List.of(PutFile.of("work/s/a.txt", "abc")));
        assertThat(engine.fs().stat(ws, "work/s/a.txt")).contains(new FileInfo("work/s/a.txt", 3, false));
        assertThat(engine.fs().stat(ws, "work/s")).contains(new FileInfo("work/s", 0, true));
        assertThat(engine.fs().stat(ws, "work/s/missing")).isEmpty();
        assertThat(engine.fs().stat(ws, "work/s/a.txt/below")).isEmpty();
        assertThat(engine.fs().stat(ws, "nothing/here")).isEmpty();
        assertThatThrownBy(() -> engine.fs().stat(ws, "work/../../etc/passwd"))
                .isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_refuse_stat_through_link_out_of_workspace() {
        RunResult r = run("mkdir -p work && echo ok > work/ok.txt && ln -s /etc/passwd out/link && ln -s /etc out/etc"
                + " && ln -s ../work out/inside");
        assertThat(r.exitCode()).isZero();
        assertThatThrownBy(() -> engine.fs().stat(ws, "out/link")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.fs().stat(ws, "out/etc/passwd")).isInstanceOf(PathEscapeException.class);
        // Positive control: a link that stays inside the workspace is followed.
        assertThat(engine.fs().stat(ws, "out/inside/ok.txt")).contains(new FileInfo("out/inside/ok.txt", 3, false));
        assertThat(engine.fs().stat(ws, "out/inside")).map(FileInfo::directory).contains(true);
    }

    @Test
    void should_round_trip_binary_files() {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        engine.fs().putFiles(ws, List.of(PutFile.of("work/bin/all.bin", all)));
        RunResult r = run("wc -c < work/bin/all.bin && cp work/bin/all.bin out/copy.bin");
        assertThat(r.stdout().strip()).isEqualTo("256");
        List<FileRef> files = engine.fs().collect(ws, List.of("out/*.bin"));
        assertThat(files).hasSize(1);
        assertThat(files.get(0).content()).isEqualTo(all);
        assertThat(files.get(0).mimeType()).isEqualTo("application/octet-stream");
    }

    @Test
    void should_stage_inputs_and_collect_outputs_within_limits() {
        engine.fs().putFiles(ws, List.of(PutFile.of("runs/src/data.csv", "a,b\n1,2\n")));
        List<StagedInput> staged = engine.fs().stageInputs(ws, List.of(InputSpec.of("workspace://runs/src/data.csv")));
        assertThat(staged).singleElement().extracting(StagedInput::to).isEqualTo("work/inputs/data.csv");
        assertThat(engine.fs().readFile(ws, "work/inputs/data.csv", 0, 100).contentAsString()).isEqualTo("a,b\n1,2\n");

        run("for i in 1 2 3; do printf '%0100d' 0 > out/f$i.txt; done");
        OutputManifest few = engine.fs().collectOutputs(ws, OutputSpec.builder().maxFiles(2).build());
        assertThat(few.files()).hasSize(2);
        assertThat(few.limitsHit()).contains(OutputLimit.MAX_FILES);

        OutputManifest small = engine.fs().collectOutputs(ws, OutputSpec.builder().maxFileBytes(10).build());
        assertThat(small.files()).hasSize(3).allSatisfy(f -> {
            assertThat(f.truncated()).isTrue();
            assertThat(f.content()).hasSize(10);
            assertThat(f.sizeBytes()).isEqualTo(100);
        });
        assertThat(small.limitsHit()).contains(OutputLimit.MAX_FILE_BYTES);

        OutputManifest none = engine.fs().collectOutputs(ws, OutputSpec.builder().globs("out/*.nothing").build());
        assertThat(none.files()).isEmpty();
        assertThat(none.limitsHit()).isEmpty();
    }

    @Test
    void should_list_and_read_windows() {
        engine.fs().putFiles(ws, List.of(PutFile.of("work/a.txt", "0123456789")));
        FileRef window = engine.fs().readFile(ws, "work/a.txt", 2, 3);
        assertThat(window.contentAsString()).isEqualTo("234");
        assertThat(window.truncated()).isTrue();
        assertThat(window.sizeBytes()).isEqualTo(10);
        assertThat(engine.fs().list(ws, "work")).extracting(FileInfo::path).contains("work/a.txt", "work/inputs");
        assertThat(engine.fs().list(ws, "**/*.txt")).extracting(FileInfo::path).containsExactly("work/a.txt");
    }

}
