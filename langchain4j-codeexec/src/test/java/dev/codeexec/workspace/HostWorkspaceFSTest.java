package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.codeexec.FileRef;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.artifact.InMemoryArtifactService;
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
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostWorkspaceFSTest {

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    InMemoryArtifactService artifacts;
    HostWorkspaceFS fs;
    Workspace ws;
    Path root;
    Path inputRoot;
    Path outside;

    @BeforeEach
    void setUp() throws IOException {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        inputRoot = Files.createDirectories(tmp.resolve("inputs-real"));
        outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret.txt"), "secret");
        // The input root is configured through a symbolic link: it must still work, resolved once.
        Path rootLink = Files.createSymbolicLink(tmp.resolve("inputs-link"), inputRoot);
        artifacts = new InMemoryArtifactService();
        fs = HostWorkspaceFS.builder().hostPaths(manager::hostPath).inputRoots(List.of(rootLink))
                .artifacts(artifacts).build();
        ws = manager.createWorkspace("fs", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    // ---- putFiles ----

    @Test
    void should_write_content_and_mode_when_putting_files() throws IOException {
        fs.putFiles(ws, List.of(PutFile.of("work/run.sh", "#!/bin/sh\necho hi\n".getBytes(), 0755),
                PutFile.of("work/deep/dir/data.txt", "data")));

        assertThat(root.resolve("work/run.sh")).hasContent("#!/bin/sh\necho hi\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("work/run.sh"))))
                .isEqualTo("rwxr-xr-x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
                root.resolve("work/deep/dir/data.txt")))).isEqualTo("rw-r--r--");
    }

    @Test
    void should_replace_file_atomically_when_it_exists() throws IOException {
        fs.putFiles(ws, List.of(PutFile.of("work/a.txt", "one")));
        fs.putFiles(ws, List.of(PutFile.of("work/a.txt", "two")));

        assertThat(root.resolve("work/a.txt")).hasContent("two");
        assertThat(tempFiles(root)).isEmpty();
    }

    @Test
    void should_replace_link_not_write_through_it_when_target_is_a_link() throws IOException {
        Files.createSymbolicLink(root.resolve("out/victim"), outside.resolve("secret.txt"));

        fs.putFiles(ws, List.of(PutFile.of("out/victim", "mine")));

        assertThat(outside.resolve("secret.txt")).hasContent("secret");
        assertThat(Files.isSymbolicLink(root.resolve("out/victim"))).isFalse();
        assertThat(root.resolve("out/victim")).hasContent("mine");
    }

    @Test
    void should_write_nothing_when_one_path_escapes() {
        assertThatThrownBy(() -> fs.putFiles(ws, List.of(PutFile.of("work/ok.txt", "ok"),
                PutFile.of("../evil.txt", "evil")))).isInstanceOf(PathEscapeException.class);

        assertThat(root.resolve("work/ok.txt")).doesNotExist();
        assertThat(root.getParent().resolve("evil.txt")).doesNotExist();
    }

    @Test
    void should_write_nothing_when_one_path_passes_through_link_out() throws IOException {
        Files.createSymbolicLink(root.resolve("out/up"), outside);

        assertThatThrownBy(() -> fs.putFiles(ws, List.of(PutFile.of("work/ok.txt", "ok"),
                PutFile.of("out/up/x.txt", "evil")))).isInstanceOf(PathEscapeException.class);

        assertThat(root.resolve("work/ok.txt")).doesNotExist();
        assertThat(outside.resolve("x.txt")).doesNotExist();
    }

    @Test
    void should_write_nothing_when_one_path_names_a_directory_or_the_root() throws IOException {
        Files.writeString(root.resolve("work/file"), "x");
        for (String bad : List.of("out", ".", "work/file/below.txt")) {
            assertThatThrownBy(() -> fs.putFiles(ws, List.of(PutFile.of("work/ok.txt", "ok"),
                    PutFile.of(bad, "bad")))).as(bad).isInstanceOf(InvalidSpecException.class);
            assertThat(root.resolve("work/ok.txt")).as(bad).doesNotExist();
        }
    }

    // ---- stageDirectory ----

    @Test
    void should_stage_directory_when_source_is_under_input_root_given_as_link() throws IOException {
        Path data = Files.createDirectories(inputRoot.resolve("data/sub"));
        Files.writeString(data.resolve("a.txt"), "A");
        Path viaLink = tmp.resolve("inputs-link/data");

        fs.stageDirectory(ws, viaLink, "work/inputs/data", StageOptions.COPY);
        fs.stageDirectory(ws, inputRoot.resolve("data/sub/a.txt"), "work/single.txt", StageOptions.COPY);

        assertThat(root.resolve("work/inputs/data/sub/a.txt")).hasContent("A");
        assertThat(root.resolve("work/single.txt")).hasContent("A");
    }

    @Test
    void should_refuse_staging_when_source_is_outside_input_roots() {
        assertThatThrownBy(() -> fs.stageDirectory(ws, outside, "work/x", StageOptions.COPY))
                .isInstanceOf(PolicyViolationException.class).hasMessageNotContaining(outside.toString());
        assertThatThrownBy(() -> fs.stageDirectory(ws, inputRoot.resolve("missing"), "work/x", StageOptions.COPY))
                .isInstanceOf(PolicyViolationException.class);
        assertThatThrownBy(() -> fs.stageDirectory(ws, inputRoot.resolve("../outside"), "work/x",
                StageOptions.COPY)).isInstanceOf(PolicyViolationException.class);
        assertThat(root.resolve("work/x")).doesNotExist();
    }

    @Test
    void should_refuse_staging_when_source_is_reached_through_link_out_of_root() throws IOException {
        Files.createSymbolicLink(inputRoot.resolve("escape"), outside);

        assertThatThrownBy(() -> fs.stageDirectory(ws, inputRoot.resolve("escape"), "work/x", StageOptions.COPY))
                .isInstanceOf(PolicyViolationException.class);
        assertThatThrownBy(() -> fs.stageDirectory(ws, inputRoot.resolve("escape/secret.txt"), "work/x",
                StageOptions.COPY)).isInstanceOf(PolicyViolationException.class);
        assertThat(root.resolve("work/x")).doesNotExist();
    }

    @Test
    void should_skip_links_inside_staged_tree_when_copying() throws IOException {
        Path data = Files.createDirectories(inputRoot.resolve("data"));
        Files.writeString(data.resolve("real.txt"), "real");
        Files.createSymbolicLink(data.resolve("secret-link"), outside.resolve("secret.txt"));
        Files.createSymbolicLink(data.resolve("dir-link"), outside);

        fs.stageDirectory(ws, data, "work/data", StageOptions.COPY);

        assertThat(root.resolve("work/data/real.txt")).hasContent("real");
        assertThat(root.resolve("work/data/secret-link")).doesNotExist();
        assertThat(root.resolve("work/data/dir-link")).doesNotExist();
    }

    @Test
    void should_drop_write_bits_when_staging_read_only() throws IOException {
        Path data = Files.createDirectories(inputRoot.resolve("skill/bin"));
        Files.writeString(data.resolve("tool.sh"), "echo");
        Files.setPosixFilePermissions(data.resolve("tool.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));

        fs.stageDirectory(ws, inputRoot.resolve("skill"), "skills/skill", StageOptions.READ_ONLY);

        for (Path p : List.of(root.resolve("skills/skill"), root.resolve("skills/skill/bin"),
                root.resolve("skills/skill/bin/tool.sh"))) {
            assertThat(Files.getPosixFilePermissions(p)).as(p.toString()).doesNotContain(
                    PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);
        }
        assertThat(Files.getPosixFilePermissions(root.resolve("skills/skill/bin/tool.sh")))
                .contains(PosixFilePermission.OWNER_EXECUTE);
        // A read-only staged tree can still be replaced and removed.
        fs.stageDirectory(ws, inputRoot.resolve("skill"), "skills/skill", StageOptions.READ_ONLY);
        fs.delete(ws, "skills/skill");
        assertThat(root.resolve("skills/skill")).doesNotExist();
    }

    // ---- stageInputs ----

    @Test
    void should_stage_artifact_version_when_reference_names_one() {
        artifacts.save("reports/data.csv", "v1".getBytes(), "text/csv");
        artifacts.save("reports/data.csv", "v2".getBytes(), "text/csv");

        List<StagedInput> staged = fs.stageInputs(ws, List.of(InputSpec.of("artifact://reports/data.csv@1"),
                new InputSpec("artifact://reports/data.csv", "work/latest.csv")));

        assertThat(staged).containsExactly(
                new StagedInput("artifact://reports/data.csv@1", "work/inputs/data.csv", 1, 2),
                new StagedInput("artifact://reports/data.csv", "work/latest.csv", 2, 2));
        assertThat(root.resolve("work/inputs/data.csv")).hasContent("v1");
        assertThat(root.resolve("work/latest.csv")).hasContent("v2");
    }

    @Test
    void should_throw_not_found_and_stage_nothing_when_artifact_version_is_missing() {
        artifacts.save("a.txt", "A".getBytes(), null);

        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(new InputSpec("artifact://a.txt", "work/first.txt"),
                InputSpec.of("artifact://a.txt@7")))).isInstanceOf(ArtifactNotFoundException.class)
                .hasMessageContaining("a.txt");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("artifact://nope"))))
                .isInstanceOf(ArtifactNotFoundException.class);
        assertThat(root.resolve("work/first.txt")).doesNotExist();
    }

    @Test
    void should_refuse_with_invalid_spec_when_artifact_reference_is_malformed() {
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("artifact://"))))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("artifact://a@0"))))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_refuse_artifact_inputs_when_no_store_is_configured() {
        HostWorkspaceFS bare = HostWorkspaceFS.builder().hostPaths(manager::hostPath).build();

        assertThatThrownBy(() -> bare.stageInputs(ws, List.of(InputSpec.of("artifact://a"))))
                .isInstanceOf(UnsupportedCapabilityException.class);
        assertThatThrownBy(() -> bare.collectOutputs(ws, OutputSpec.builder().save(true).build()))
                .isInstanceOf(UnsupportedCapabilityException.class);
    }

    @Test
    void should_copy_workspace_path_when_source_is_workspace_scheme() throws IOException {
        Files.createDirectories(root.resolve("runs/d"));
        Files.writeString(root.resolve("runs/d/x.txt"), "x");
        Files.writeString(root.resolve("runs/y.txt"), "yy");

        List<StagedInput> staged = fs.stageInputs(ws, List.of(InputSpec.of("workspace://runs/d"),
                new InputSpec("workspace://runs/y.txt", "out/y-copy.txt")));

        assertThat(staged).extracting(StagedInput::to).containsExactly("work/inputs/d", "out/y-copy.txt");
        assertThat(staged).extracting(StagedInput::sizeBytes).containsExactly(1L, 2L);
        assertThat(root.resolve("work/inputs/d/x.txt")).hasContent("x");
        assertThat(root.resolve("out/y-copy.txt")).hasContent("yy");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("workspace://../x"))))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("workspace://runs/none"))))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_refuse_staging_when_destination_lies_inside_source() throws IOException {
        Files.writeString(root.resolve("work/a.txt"), "a");
        Files.createDirectories(inputRoot.resolve("tree"));

        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("workspace://work"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("inside the source");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(new InputSpec("workspace://.", "out/all"))))
                .isInstanceOf(InvalidSpecException.class);
        fs.stageInputs(ws, List.of(new InputSpec("workspace://work", "out/work-copy")));

        assertThat(root.resolve("out/work-copy/a.txt")).hasContent("a");
        assertThat(root.resolve("work/inputs/work")).doesNotExist();
        assertThat(tempFiles(root)).isEmpty();
    }

    @Test
    void should_stage_host_path_when_under_input_root_and_refuse_it_outside() throws IOException {
        Files.writeString(inputRoot.resolve("granted.txt"), "g");

        List<StagedInput> staged = fs.stageInputs(ws, List.of(InputSpec.of("host://" + inputRoot.resolve(
                "granted.txt")), new InputSpec(inputRoot.resolve("granted.txt").toString(), "work/bare.txt")));

        assertThat(staged).extracting(StagedInput::to).containsExactly("work/inputs/granted.txt", "work/bare.txt");
        assertThat(root.resolve("work/inputs/granted.txt")).hasContent("g");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(new InputSpec("host://" + inputRoot.resolve(
                "granted.txt"), "work/first.txt"), InputSpec.of("host://" + outside.resolve("secret.txt")))))
                .isInstanceOf(PolicyViolationException.class).hasMessageNotContaining(outside.toString());
        assertThat(root.resolve("work/first.txt")).doesNotExist();
        assertThat(root.resolve("work/inputs/secret.txt")).doesNotExist();
    }

    @Test
    void should_refuse_host_path_when_it_is_relative() {
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("host://relative/x"))))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_refuse_unknown_scheme() {
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("s3://bucket/x"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("unknown source");
        assertThatThrownBy(() -> fs.stageInputs(ws, List.of(InputSpec.of("relative/path"))))
                .isInstanceOf(InvalidSpecException.class);
    }

    // ---- collectOutputs ----

    @Test
    void should_save_outputs_as_artifacts_when_save_is_set() throws IOException {
        Files.writeString(root.resolve("out/report.md"), "# hi");
        Files.createDirectories(root.resolve("out/img"));
        Files.write(root.resolve("out/img/p.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G'});

        OutputManifest m = fs.collectOutputs(ws, OutputSpec.builder().save(true).namePrefix("run1/").build());

        assertThat(m.files()).extracting(FileRef::name).containsExactly("out/img/p.png", "out/report.md");
        assertThat(m.files()).extracting(FileRef::savedAs)
                .containsExactly("artifact://run1/out/img/p.png@1", "artifact://run1/out/report.md@1");
        assertThat(artifacts.load("run1/out/report.md", 1).content()).isEqualTo("# hi".getBytes());
        assertThat(artifacts.load("run1/out/report.md", 1).mimeType()).isEqualTo("text/markdown");
        assertThat(m.anyLimitHit()).isFalse();
    }

    @Test
    void should_refuse_save_and_save_nothing_when_a_file_is_truncated() throws IOException {
        Files.writeString(root.resolve("out/a.txt"), "small");
        Files.writeString(root.resolve("out/b.txt"), "x".repeat(100));

        assertThatThrownBy(() -> fs.collectOutputs(ws, OutputSpec.builder().save(true).maxFileBytes(10).build()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("out/b.txt");
        assertThat(artifacts.names()).isEmpty();
    }

    @Test
    void should_omit_content_when_inline_is_false() throws IOException {
        Files.writeString(root.resolve("out/a.txt"), "abc");

        OutputManifest m = fs.collectOutputs(ws, OutputSpec.builder().inline(false).build());

        assertThat(m.files()).singleElement().satisfies(f -> {
            assertThat(f.content()).isNull();
            assertThat(f.sizeBytes()).isEqualTo(3);
        });
    }

    @Test
    void should_guess_mime_types_when_collecting() throws IOException {
        Files.writeString(root.resolve("out/t.csv"), "a,b\n");
        Files.writeString(root.resolve("out/noext"), "plain text\n");
        Files.write(root.resolve("out/blob"), new byte[] {0, 1, 2, (byte) 0xff});
        Files.write(root.resolve("out/p.png"), new byte[] {1});
        Files.writeString(root.resolve("out/d.json"), "{}");

        Map<String, String> types = new TreeMap<>();
        fs.collectOutputs(ws, OutputSpec.DEFAULT).files().forEach(f -> types.put(f.name(), f.mimeType()));

        assertThat(types).containsExactlyEntriesOf(new TreeMap<>(Map.of("out/blob", "application/octet-stream",
                "out/d.json", "application/json", "out/noext", "text/plain", "out/p.png", "image/png",
                "out/t.csv", "text/csv")));
    }

    @Test
    void should_report_limits_when_outputs_exceed_them() throws IOException {
        for (int i = 0; i < 5; i++) {
            Files.writeString(root.resolve("out/f" + i + ".txt"), "0123456789");
        }

        OutputManifest files = fs.collectOutputs(ws, OutputSpec.builder().maxFiles(3).build());
        OutputManifest perFile = fs.collectOutputs(ws, OutputSpec.builder().maxFileBytes(4).build());
        OutputManifest total = fs.collectOutputs(ws, OutputSpec.builder().maxTotalBytes(25).build());
        OutputManifest exact = fs.collectOutputs(ws, OutputSpec.builder().maxFiles(5).maxTotalBytes(50).build());

        assertThat(files.files()).hasSize(3);
        assertThat(files.limitsHit()).containsExactly(OutputLimit.MAX_FILES);
        assertThat(perFile.files()).allSatisfy(f -> assertThat(f.content()).hasSize(4));
        assertThat(perFile.limitsHit()).containsExactly(OutputLimit.MAX_FILE_BYTES);
        assertThat(total.files()).extracting(f -> f.content().length).containsExactly(10, 10, 5);
        assertThat(total.limitsHit()).containsExactly(OutputLimit.MAX_TOTAL_BYTES);
        assertThat(exact.files()).hasSize(5);
        assertThat(exact.anyLimitHit()).isFalse();
    }

    // ---- list, read, delete ----

    @Test
    void should_list_directory_recursively_and_glob_files_only() throws IOException {
        Files.createDirectories(root.resolve("out/sub"));
        Files.writeString(root.resolve("out/a.txt"), "a");
        Files.writeString(root.resolve("out/sub/b.txt"), "bb");
        Files.writeString(root.resolve("out/sub/c.csv"), "c");

        List<FileInfo> dir = fs.list(ws, "out");
        List<FileInfo> glob = fs.list(ws, "out/**/*.txt");
        List<FileInfo> single = fs.list(ws, "out/a.txt");

        assertThat(dir).containsExactly(new FileInfo("out/a.txt", 1, false), new FileInfo("out/sub", 0, true),
                new FileInfo("out/sub/b.txt", 2, false), new FileInfo("out/sub/c.csv", 1, false));
        // "**/" matches zero or more directories, so out/a.txt matches out/**/*.txt too.
        assertThat(glob).containsExactly(new FileInfo("out/a.txt", 1, false), new FileInfo("out/sub/b.txt", 2, false));
        assertThat(fs.list(ws, "**/*.txt")).extracting(FileInfo::path).containsExactly("out/a.txt", "out/sub/b.txt");
        assertThat(single).containsExactly(new FileInfo("out/a.txt", 1, false));
        assertThat(fs.list(ws, "out/*.none")).isEmpty();
    }

    @Test
    void should_never_list_or_collect_temporary_files() throws IOException {
        Files.writeString(root.resolve("out/real.txt"), "r");
        Files.writeString(root.resolve("out/.put-123.tmp"), "partial");
        Path stage = Files.createDirectories(root.resolve("out/.stage-1a2b-data/sub"));
        Files.writeString(stage.resolve("half.txt"), "half");
        Files.writeString(root.resolve("out/.stage-3c-file.txt"), "half");

        assertThat(fs.list(ws, "out")).extracting(FileInfo::path).containsExactly("out/real.txt");
        assertThat(fs.list(ws, "out/**")).extracting(FileInfo::path).containsExactly("out/real.txt");
        assertThat(fs.collect(ws, List.of("out/**"))).extracting(FileRef::name).containsExactly("out/real.txt");
        assertThat(fs.collectOutputs(ws, OutputSpec.DEFAULT).files()).extracting(FileRef::name)
                .containsExactly("out/real.txt");
    }

    @Test
    void should_delete_link_not_target_when_deleting_a_link() throws IOException {
        Files.writeString(root.resolve("work/keep.txt"), "keep");
        Files.createSymbolicLink(root.resolve("out/inside"), root.resolve("work/keep.txt"));
        Files.createSymbolicLink(root.resolve("out/outdir"), outside);

        fs.delete(ws, "out/inside");
        fs.delete(ws, "out/outdir");
        fs.delete(ws, "out/missing");

        assertThat(Files.exists(root.resolve("out/inside"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(root.resolve("out/outdir"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(root.resolve("work/keep.txt")).hasContent("keep");
        assertThat(outside.resolve("secret.txt")).hasContent("secret");
        assertThatThrownBy(() -> fs.delete(ws, ".")).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_read_window_and_mark_truncated_when_bytes_follow() throws IOException {
        Files.writeString(root.resolve("work/w.txt"), "0123456789");

        FileRef mid = fs.readFile(ws, "work/w.txt", 2, 3);
        FileRef tail = fs.readFile(ws, "work/w.txt", 8, 100);
        FileRef past = fs.readFile(ws, "work/w.txt", 50, 10);

        assertThat(mid.contentAsString()).isEqualTo("234");
        assertThat(mid.truncated()).isTrue();
        assertThat(tail.contentAsString()).isEqualTo("89");
        assertThat(tail.truncated()).isFalse();
        assertThat(past.content()).isEmpty();
        assertThatThrownBy(() -> fs.readFile(ws, "work", 0, 1)).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> fs.readFile(ws, "work/w.txt", -1, 1)).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_refuse_reading_fifo_instead_of_blocking() throws Exception {
        Process mk = new ProcessBuilder("mkfifo", root.resolve("out/pipe").toString()).start();
        assertThat(mk.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(mk.exitValue()).isZero();

        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertThatThrownBy(() -> fs.readFile(ws, "out/pipe", 0, 10)).isInstanceOf(InvalidSpecException.class);
            assertThat(fs.collectOutputs(ws, OutputSpec.DEFAULT).files()).isEmpty();
            assertThat(fs.list(ws, "out")).isEmpty();
        });
    }

    private static List<Path> tempFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(".put-")
                    || p.getFileName().toString().startsWith(".stage-")).toList();
        }
    }
}
