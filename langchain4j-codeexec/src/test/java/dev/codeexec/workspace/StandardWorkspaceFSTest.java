package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.FileRef;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.OutputLimit;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.InMemoryWorkspaceFiles;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file rules on primitives that are not a host directory: the same outcomes as {@link HostWorkspaceFSTest} where
 * the rules, not the host, decide them.
 */
class StandardWorkspaceFSTest {

    @TempDir
    Path tmp;

    InMemoryWorkspaceFiles.Store store;
    InMemoryArtifactService artifacts;
    StandardWorkspaceFS fs;
    Workspace ws = new Workspace("mem-1", "/workspace");
    Path inputRoot;

    @BeforeEach
    void setUp() throws IOException {
        store = new InMemoryWorkspaceFiles.Store();
        InMemoryWorkspaceFiles f = new InMemoryWorkspaceFiles(store);
        for (String d : WorkspaceLayout.DIRECTORIES) {
            f.mkdirs(d);
        }
        artifacts = new InMemoryArtifactService();
        inputRoot = Files.createDirectories(tmp.resolve("granted"));
        fs = StandardWorkspaceFS.builder().files(w -> new InMemoryWorkspaceFiles(store)).inputRoots(List.of(inputRoot))
                .artifacts(artifacts).access(w -> new PathAccess() {
                    @Override
                    public boolean canRead(String rel) {
                        return !rel.startsWith("work/private");
                    }

                    @Override
                    public boolean canWrite(String rel) {
                        return !rel.startsWith("work/private") && !rel.startsWith("skills/locked");
                    }
                }).build();
        fs.putFiles(ws, List.of(PutFile.of("work/keep.txt", "keep")));
    }

    @Test
    void should_follow_links_in_and_skip_links_out_and_temporary_names_when_collecting() {
        fs.putFiles(ws, List.of(PutFile.of("out/a.txt", "a"), PutFile.of("out/.put-1.tmp", "partial"),
                PutFile.of("out/.stage-9-x/half.txt", "half")));
        store.link("out/in", "work/keep.txt");
        store.link("out/secret", "/etc/secret");
        store.link("out/dir-in", "work");

        List<FileRef> got = fs.collect(ws, List.of("out/**"));

        assertThat(got).extracting(FileRef::name).containsExactly("out/a.txt", "out/in");
        assertThat(got.get(1).contentAsString()).isEqualTo("keep");
        assertThat(fs.list(ws, "out")).extracting(FileInfo::path).containsExactly("out/a.txt", "out/in");
        assertThatThrownBy(() -> fs.readFile(ws, "out/secret", 0, 10)).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_report_limits_when_outputs_exceed_them() {
        for (int i = 0; i < 5; i++) {
            fs.putFiles(ws, List.of(PutFile.of("out/f" + i + ".txt", "0123456789")));
        }

        OutputManifest files = fs.collectOutputs(ws, OutputSpec.builder().maxFiles(3).build());
        OutputManifest perFile = fs.collectOutputs(ws, OutputSpec.builder().maxFileBytes(4).build());
        OutputManifest total = fs.collectOutputs(ws, OutputSpec.builder().maxTotalBytes(25).build());
        OutputManifest exact = fs.collectOutputs(ws, OutputSpec.builder().maxFiles(5).maxTotalBytes(50).build());
        OutputManifest both = fs.collectOutputs(ws, OutputSpec.builder().maxFiles(2).maxTotalBytes(20).build());

        assertThat(files.files()).hasSize(3);
        assertThat(files.limitsHit()).containsExactly(OutputLimit.MAX_FILES);
        assertThat(perFile.files()).allSatisfy(f -> assertThat(f.content()).hasSize(4));
        assertThat(perFile.limitsHit()).containsExactly(OutputLimit.MAX_FILE_BYTES);
        assertThat(total.files()).extracting(f -> f.content().length).containsExactly(10, 10, 5);
        assertThat(total.limitsHit()).containsExactly(OutputLimit.MAX_TOTAL_BYTES);
        assertThat(exact.files()).hasSize(5);
        assertThat(exact.anyLimitHit()).isFalse();
        // The count is reached first: the byte budget, spent exactly, is not reported.
        assertThat(both.files()).hasSize(2);
        assertThat(both.limitsHit()).containsExactly(OutputLimit.MAX_FILES);
    }

    @Test
    void should_stage_every_source_and_nothing_when_one_input_is_bad() throws IOException {
        artifacts.save("reports/data.csv", "v1".getBytes(), "text/csv");
        Files.createDirectories(inputRoot.resolve("tree"));
        Files.writeString(inputRoot.resolve("tree/granted.txt"), "granted");
        Files.createSymbolicLink(inputRoot.resolve("tree/escape"), tmp);
        fs.putFiles(ws, List.of(PutFile.of("runs/d/x.txt", "x")));

        List<StagedInput> staged = fs.stageInputs(ws, List.of(InputSpec.of("artifact://reports/data.csv"),
                InputSpec.of("workspace://runs/d"), InputSpec.of("host://" + inputRoot.resolve("tree"))));
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(new InputSpec("workspace://runs/d", "work/again"),
                InputSpec.of("s3://bucket/x")))).isInstanceOf(InvalidSpecException.class);

        assertThat(staged).extracting(StagedInput::to).containsExactly("work/inputs/data.csv", "work/inputs/d",
                "work/inputs/tree");
        assertThat(staged).extracting(StagedInput::sizeBytes).containsExactly(2L, 1L, 7L);
        assertThat(fs.list(ws, "work/inputs")).extracting(FileInfo::path).containsExactly("work/inputs/d",
                "work/inputs/d/x.txt", "work/inputs/data.csv", "work/inputs/tree", "work/inputs/tree/granted.txt");
        assertThatThrownBy(() -> fs.list(ws, "work/again")).hasMessageContaining("does not exist");
    }

    @Test
    void should_refuse_staging_into_the_source_and_outside_the_input_roots() {
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("workspace://work"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("inside the source");
        store.link("out/to-work", "work");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(new InputSpec("workspace://work", "out/to-work/x"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("inside the source");
        assertThatThrownBy(() -> fs.stageDirectory(ws, tmp, "work/x", StageOptions.COPY))
                .isInstanceOf(PolicyViolationException.class);
    }

    @Test
    void should_write_nothing_when_one_path_is_refused() {
        store.link("out/up", "/elsewhere");
        fs.putFiles(ws, List.of(PutFile.of("work/file", "f")));

        Map<String, Class<? extends CodeExecException>> refused = Map.of("out/up/x.txt", PathEscapeException.class,
                "../x", PathEscapeException.class, "out", InvalidSpecException.class, ".", InvalidSpecException.class,
                "work/file/below.txt", InvalidSpecException.class, "work/private/x", PolicyViolationException.class);
        refused.forEach((bad, type) -> assertThatThrownBy(() -> fs.putFiles(ws, List.of(PutFile.of("work/ok.txt",
                "ok"), PutFile.of(bad, "b")))).as(bad).isInstanceOf(type));

        assertThatThrownBy(() -> fs.list(ws, "work/ok.txt")).hasMessageContaining("does not exist");
    }

    @Test
    void should_apply_access_rules_to_reads_listings_and_collection() {
        fs.putFiles(ws, List.of(PutFile.of("work/public.txt", "p")));
        new InMemoryWorkspaceFiles(store).write("work/private/secret.txt", "s".getBytes(), 0600);

        assertThatThrownBy(() -> fs.readFile(ws, "work/private/secret.txt", 0, 10))
                .isInstanceOf(PolicyViolationException.class);
        assertThat(fs.list(ws, "work")).extracting(FileInfo::path).doesNotContain("work/private",
                "work/private/secret.txt").contains("work/public.txt");
        assertThat(fs.collect(ws, List.of("work/**"))).extracting(FileRef::name).doesNotContain(
                "work/private/secret.txt");
        assertThatThrownBy(() -> fs.delete(ws, "work/private")).isInstanceOf(PolicyViolationException.class);
        assertThatThrownBy(() -> fs.stageDirectory(ws, inputRoot, "skills/locked", StageOptions.READ_ONLY))
                .isInstanceOf(PolicyViolationException.class);
    }

    @Test
    void should_read_window_guess_type_and_save_artifacts() {
        fs.putFiles(ws, List.of(PutFile.of("out/report.md", "# 0123456789")));

        FileRef mid = fs.readFile(ws, "out/report.md", 2, 3);
        OutputManifest saved = fs.collectOutputs(ws, OutputSpec.builder().save(true).namePrefix("run/").build());

        assertThat(mid.contentAsString()).isEqualTo("012");
        assertThat(mid.truncated()).isTrue();
        assertThat(mid.mimeType()).isEqualTo("text/markdown");
        assertThat(saved.files()).extracting(FileRef::savedAs).containsExactly("artifact://run/out/report.md@1");
        assertThatThrownBy(() -> fs.readFile(ws, "out", 0, 1)).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("is a directory");
    }

    @Test
    void should_work_when_built_as_docs_workspace_md_shows() {
        List<Path> inputRoots = List.of(inputRoot);
        // tag::backend[]
        WorkspaceFS fs = StandardWorkspaceFS.builder()
                .files(ws -> filesOf(ws))           // throws WorkspaceGoneException when the workspace is gone
                .inputRoots(inputRoots).artifacts(artifacts)
                .build();
        // end::backend[]

        fs.putFiles(ws, List.of(PutFile.of("out/doc.txt", "doc")));
        assertThat(fs.collect(ws, List.of("out/**"))).extracting(FileRef::contentAsString).containsExactly("doc");
    }

    /** The primitives of a workspace: here the in-memory fake, in a backend its own provider. */
    private WorkspaceFiles filesOf(Workspace w) {
        return new InMemoryWorkspaceFiles(store);
    }

    @Test
    void should_throw_workspace_gone_when_the_workspace_was_removed() {
        store.remove();

        assertThatThrownBy(() -> fs.list(ws, "out")).isInstanceOf(WorkspaceGoneException.class);
        assertThatThrownBy(() -> fs.putFiles(ws, List.of(PutFile.of("out/x", "x"))))
                .isInstanceOf(WorkspaceGoneException.class);
    }
}
