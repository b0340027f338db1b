package dev.codeexec.workspace.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Snapshots on the local engine (host workspace file system), into the in-memory and the file-system artifact
 * stores: round trip with a clean receipt, modes, tampered and missing blobs, bounds, links and special files, the
 * run history, and what the receipt reports about a workspace changed after a restore.
 */
class WorkspaceSnapshotsTest {

    @TempDir
    Path tmp;

    private LocalEngine engine;
    private Workspace source;
    private Workspace target;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().rootDir(tmp.resolve("engine")).build();
        source = engine.manager().createWorkspace("source", WorkspacePolicy.DEFAULT);
        target = engine.manager().createWorkspace("target", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    static Stream<Arguments> stores() {
        return Stream.of(
                Arguments.of("in-memory", (Function<Path, ArtifactService>) p -> new InMemoryArtifactService()),
                Arguments.of("file-system", (Function<Path, ArtifactService>) p -> FileSystemArtifactService.at(
                        p.resolve("store"))));
    }

    private void fill() {
        engine.fs().putFiles(source, List.of(
                PutFile.of("work/data.csv", "a,b\n1,2\n"),
                PutFile.of("work/same-1.txt", "same"),
                PutFile.of("work/nested/deep/same-2.txt", "same"),
                PutFile.of("out/report.md", "# report\n"),
                PutFile.of("home/.bashrc", "export X=1\n"),
                PutFile.of("work/run.sh", "#!/bin/sh\necho hi\n".getBytes(StandardCharsets.UTF_8), 0755),
                PutFile.of("work/private.key", "k".getBytes(StandardCharsets.UTF_8), 0600),
                PutFile.of("work/empty.bin", new byte[0])));
        engine.fs().createDirectories(source, "work/empty-dir");
    }

    private void sh(Workspace ws, String line) {
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.shell(line).build()).exitCode()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void should_restore_every_file_with_a_clean_receipt_when_the_snapshot_is_intact(String n,
                                                                                  Function<Path, ArtifactService> s) {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(s.apply(tmp));
        fill();

        Snapshot snap = snapshots.capture(engine, source, "analysis", SnapshotOptions.DEFAULT);
        RestoreReceipt receipt = snapshots.restore(engine, target, "analysis", snap.version());

        assertThat(snap.version()).isEqualTo(1);
        assertThat(snap.manifest().fileCount()).isEqualTo(8);
        assertThat(snap.storedBytes()).as("the pack holds each file once, as an archive")
                .isEqualTo(snap.manifest().totalBytes());
        assertThat(snap.manifest().sourceEngine()).isEqualTo(engine.name());
        assertThat(receipt.clean()).as(receipt.summary()).isTrue();
        assertThat(receipt.filesRestored()).isEqualTo(8);
        assertThat(engine.fs().readFile(target, "work/nested/deep/same-2.txt", 0, 100).content())
                .isEqualTo("same".getBytes(StandardCharsets.UTF_8));
        assertThat(engine.fs().stat(target, "work/empty-dir").orElseThrow().directory()).isTrue();
        assertThat(receipt.summary()).contains("clean").contains("kernel memory").contains("runs/");
    }

    @Test
    void should_keep_each_version_self_contained_and_delete_every_version_with_the_name() {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        fill();

        Snapshot first = snapshots.capture(engine, source, "s", SnapshotOptions.DEFAULT);
        Snapshot second = snapshots.capture(engine, source, "s", SnapshotOptions.DEFAULT);
        store.save("snapshots/manifests/other", "{}".getBytes(StandardCharsets.UTF_8), null);

        assertThat(second.version()).isEqualTo(2);
        assertThat(second.packRef()).isNotEqualTo(first.packRef());
        assertThat(snapshots.restore(engine, target, "s", 1).clean()).isTrue();
        snapshots.delete("s");
        assertThat(snapshots.versions("s")).isEmpty();
        assertThat(store.names()).as("the other name is kept").containsExactly("snapshots/manifests/other");
        assertThatThrownBy(() -> snapshots.restore(engine, target, "s", null))
                .isInstanceOf(dev.codeexec.artifact.ArtifactNotFoundException.class);
    }

    @Test
    void should_keep_modes_when_restored() throws Exception {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
        fill();

        Snapshot snap = snapshots.capture(engine, source, "modes", SnapshotOptions.DEFAULT);
        RestoreReceipt receipt = snapshots.restore(engine, target, "modes", null);

        SnapshotEntry script = snap.manifest().files().stream().filter(e -> e.path().equals("work/run.sh"))
                .findFirst().orElseThrow();
        assertThat(script.mode()).isEqualTo(0755);
        assertThat(receipt.clean()).isTrue();
        String modes = engine.runner().runProgram(target, RunProgramSpec.shell(
                "stat -c '%a %n' work/run.sh work/private.key work/data.csv").build()).stdout();
        assertThat(modes).contains("755 work/run.sh").contains("600 work/private.key").contains("644 work/data.csv");
        assertThat(engine.runner().runProgram(target, RunProgramSpec.shell("./work/run.sh").build()).stdout())
                .isEqualTo("hi\n");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void should_refuse_the_restore_and_keep_the_target_when_a_blob_was_tampered_with(
            String n, Function<Path, ArtifactService> s) {
        ArtifactService store = s.apply(tmp);
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        fill();
        Snapshot snap = snapshots.capture(engine, source, "t", SnapshotOptions.DEFAULT);
        engine.fs().putFiles(target, List.of(PutFile.of("work/data.csv", "target's own"),
                PutFile.of("work/mine.txt", "keep me")));
        SnapshotEntry data = entry(snap, "work/data.csv");
        byte[] pack = store.load(snap.packRef()).content();
        System.arraycopy("EVIL".getBytes(StandardCharsets.UTF_8), 0, pack, (int) data.offset(), 4);
        store.delete(snap.packRef().name());
        store.save(snap.packRef().name(), pack, null); // a valid artifact, the same length, wrong bytes

        assertThatThrownBy(() -> snapshots.restore(engine, target, "t", null))
                .isInstanceOf(SnapshotIntegrityException.class)
                .hasMessageContaining("work/data.csv")
                .satisfies(e -> assertThat(((SnapshotIntegrityException) e).path()).isEqualTo("work/data.csv"));
        assertThat(text(target, "work/data.csv")).isEqualTo("target's own");
        assertThat(text(target, "work/mine.txt")).isEqualTo("keep me");
        assertThat(engine.fs().stat(target, "out/report.md")).as("nothing written before the check").isEmpty();
    }

    @Test
    void should_refuse_the_restore_when_the_file_system_store_finds_a_blob_damaged() throws Exception {
        Path root = tmp.resolve("store");
        ArtifactService store = FileSystemArtifactService.at(root);
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        fill();
        Snapshot snap = snapshots.capture(engine, source, "d", SnapshotOptions.DEFAULT);
        Path bin = root.resolve("snapshots/packs/d/@versions/v1.bin");
        byte[] pack = Files.readAllBytes(bin);
        pack[(int) entry(snap, "out/report.md").offset() + 2] = 'R'; // same length, other bytes, metadata untouched
        Files.write(bin, pack);

        assertThatThrownBy(() -> snapshots.restore(engine, target, "d", null))
                .isInstanceOf(SnapshotIntegrityException.class).hasMessageContaining("out/report.md");
        assertThat(engine.fs().stat(target, "work/data.csv")).isEmpty();
    }

    @Test
    void should_refuse_the_restore_when_the_pack_is_missing() {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        fill();
        Snapshot snap = snapshots.capture(engine, source, "m", SnapshotOptions.DEFAULT);
        store.delete(snap.packRef().name());

        assertThatThrownBy(() -> snapshots.restore(engine, target, "m", null))
                .isInstanceOf(SnapshotIntegrityException.class).hasMessageContaining("pack")
                .hasMessageContaining("missing");
        assertThat(engine.fs().stat(target, "work/data.csv")).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void should_refuse_the_restore_and_write_nothing_when_the_pack_was_cut_short(String n,
                                                                               Function<Path, ArtifactService> s) {
        ArtifactService store = s.apply(tmp);
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        fill();
        Snapshot snap = snapshots.capture(engine, source, "short", SnapshotOptions.DEFAULT);
        byte[] pack = store.load(snap.packRef()).content();
        store.delete(snap.packRef().name());
        store.save(snap.packRef().name(), java.util.Arrays.copyOf(pack, pack.length - 1), null);

        assertThatThrownBy(() -> snapshots.restore(engine, target, "short", null))
                .isInstanceOf(SnapshotIntegrityException.class).hasMessageContaining("pack holds");
        assertThat(engine.fs().stat(target, "work/data.csv")).isEmpty();
        // The control: the whole pack restores.
        store.delete(snap.packRef().name());
        store.save(snap.packRef().name(), pack, null);
        assertThat(snapshots.restore(engine, target, "short", null).clean()).isTrue();
    }

    @Test
    void should_refuse_a_snapshot_over_the_byte_bound_and_record_no_manifest() {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        engine.fs().putFiles(source, List.of(PutFile.of("work/big.bin", new byte[5000]),
                PutFile.of("out/small.txt", "x")));

        assertThatThrownBy(() -> snapshots.capture(engine, source, "big",
                SnapshotOptions.builder().maxTotalBytes(4096).build()))
                .isInstanceOf(SnapshotLimitException.class)
                .hasMessageContaining("maxTotalBytes = 4096").hasMessageContaining("5000 bytes")
                .satisfies(e -> assertThat(((SnapshotLimitException) e).bound())
                        .isEqualTo(SnapshotLimitException.Bound.MAX_TOTAL_BYTES));
        assertThat(snapshots.versions("big")).isEmpty();
        assertThat(store.names()).as("nothing stored, not even part of a pack").isEmpty();
        // The control: within the bound the same workspace is captured.
        assertThat(snapshots.capture(engine, source, "big", SnapshotOptions.builder().maxTotalBytes(5001).build())
                .version()).isEqualTo(1);
    }

    @Test
    void should_refuse_a_snapshot_over_the_file_count_bound_and_record_no_manifest() {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        for (int i = 0; i < 4; i++) {
            engine.fs().putFiles(source, List.of(PutFile.of("work/f" + i + ".txt", "x" + i)));
        }

        assertThatThrownBy(() -> snapshots.capture(engine, source, "many",
                SnapshotOptions.builder().maxFiles(3).build()))
                .isInstanceOf(SnapshotLimitException.class).hasMessageContaining("maxFiles = 3")
                .hasMessageContaining("4 found");
        assertThat(store.names()).isEmpty();
        assertThat(snapshots.capture(engine, source, "many", SnapshotOptions.builder().maxFiles(4).build())
                .manifest().fileCount()).isEqualTo(4);
    }

    @Test
    void should_skip_links_and_special_files_and_never_follow_a_link_out_of_the_workspace() throws Exception {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        Path secret = tmp.resolve("host-secret.txt");
        Files.writeString(secret, "host-secret-4711");
        engine.fs().putFiles(source, List.of(PutFile.of("work/real.txt", "real")));
        sh(source, "ln -s '" + secret + "' work/outside && ln -s real.txt work/inside && mkfifo work/pipe"
                + " && ln -s '" + secret.getParent() + "' out/dir-outside");

        Snapshot snap = snapshots.capture(engine, source, "links", SnapshotOptions.DEFAULT);

        assertThat(snap.manifest().files()).extracting(SnapshotEntry::path).containsExactly("work/real.txt");
        assertThat(snap.manifest().skipped()).extracting(SnapshotEntry::path, SnapshotEntry::type).containsExactly(
                org.assertj.core.groups.Tuple.tuple("out/dir-outside", SnapshotEntry.Type.LINK),
                org.assertj.core.groups.Tuple.tuple("work/inside", SnapshotEntry.Type.LINK),
                org.assertj.core.groups.Tuple.tuple("work/outside", SnapshotEntry.Type.LINK),
                org.assertj.core.groups.Tuple.tuple("work/pipe", SnapshotEntry.Type.SPECIAL));
        for (String name : store.names()) {
            assertThat(new String(store.load(name).orElseThrow().content(), StandardCharsets.UTF_8))
                    .doesNotContain("host-secret-4711");
        }
        RestoreReceipt receipt = snapshots.restore(engine, target, "links", null);
        assertThat(receipt.clean()).isTrue();
        assertThat(receipt.skipped()).hasSize(4);
        assertThat(receipt.summary()).contains("work/outside (symbolic link");
        assertThat(engine.fs().stat(target, "work/outside")).isEmpty();
    }

    @Test
    void should_leave_runs_out_by_default_and_take_it_when_asked() {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
        engine.fs().putFiles(source, List.of(PutFile.of("runs/run_1/stdout.txt", "log"),
                PutFile.of("work/a.txt", "a")));

        Snapshot without = snapshots.capture(engine, source, "r", SnapshotOptions.DEFAULT);
        Snapshot with = snapshots.capture(engine, source, "r", SnapshotOptions.builder().includeRuns(true).build());

        assertThat(without.manifest().files()).extracting(SnapshotEntry::path).containsExactly("work/a.txt");
        assertThat(with.manifest().files()).extracting(SnapshotEntry::path)
                .containsExactly("runs/run_1/stdout.txt", "work/a.txt");
        assertThat(snapshots.restore(engine, target, "r", with.version()).clean()).isTrue();
        assertThat(text(target, "runs/run_1/stdout.txt")).isEqualTo("log");
    }

    @Test
    void should_take_files_matching_a_glob_outside_the_roots() {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
        engine.fs().putFiles(source, List.of(PutFile.of("skills/s1/SKILL.md", "skill"),
                PutFile.of("skills/s1/x.py", "x"), PutFile.of("notes.txt", "n")));

        Snapshot snap = snapshots.capture(engine, source, "g", SnapshotOptions.builder()
                .globs(List.of("skills/**/*.md", "notes.txt")).build());

        assertThat(snap.manifest().files()).extracting(SnapshotEntry::path)
                .containsExactly("notes.txt", "skills/s1/SKILL.md");
    }

    @Test
    void should_report_missing_changed_and_extra_files_when_the_workspace_differs_after_a_restore() {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
        fill();
        snapshots.capture(engine, source, "c", SnapshotOptions.DEFAULT);
        assertThat(snapshots.restore(engine, target, "c", null).clean()).isTrue();

        engine.fs().putFiles(target, List.of(PutFile.of("work/data.csv", "a,b\n9,9\n"),
                PutFile.of("out/new.txt", "new")));
        engine.fs().delete(target, "home/.bashrc");
        sh(target, "chmod 700 work/run.sh");
        RestoreReceipt receipt = snapshots.check(engine, target, "c", null);

        assertThat(receipt.clean()).isFalse();
        assertThat(receipt.differences()).extracting(ReceiptDifference::kind, ReceiptDifference::path)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(ReceiptDifference.Kind.MISSING, "home/.bashrc"),
                        org.assertj.core.groups.Tuple.tuple(ReceiptDifference.Kind.EXTRA, "out/new.txt"),
                        org.assertj.core.groups.Tuple.tuple(ReceiptDifference.Kind.CHANGED, "work/data.csv"),
                        org.assertj.core.groups.Tuple.tuple(ReceiptDifference.Kind.MODE, "work/run.sh"));
        assertThat(receipt.summary()).contains("1 missing, 1 changed, 1 mode, 1 extra");
    }

    @Test
    void should_keep_the_targets_other_files_and_report_them_as_extra_when_restoring_into_a_used_workspace() {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
        fill();
        snapshots.capture(engine, source, "u", SnapshotOptions.DEFAULT);
        engine.fs().putFiles(target, List.of(PutFile.of("work/theirs.txt", "theirs")));

        RestoreReceipt receipt = snapshots.restore(engine, target, "u", null);

        assertThat(text(target, "work/theirs.txt")).isEqualTo("theirs");
        assertThat(receipt.differences()).extracting(ReceiptDifference::kind)
                .containsExactly(ReceiptDifference.Kind.EXTRA);
    }

    @Test
    void should_capture_a_file_larger_than_a_read_window_when_streaming() {
        InMemoryArtifactService store = new InMemoryArtifactService();
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);
        byte[] big = new byte[20 << 20];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        engine.fs().putFiles(source, List.of(PutFile.of("work/big.bin", big)));

        snapshots.capture(engine, source, "big", SnapshotOptions.DEFAULT);
        RestoreReceipt receipt = snapshots.restore(engine, target, "big", null);

        assertThat(receipt.clean()).isTrue();
        assertThat(receipt.bytesRestored()).isEqualTo(big.length);
    }

    @Test
    void should_refuse_a_snapshot_name_that_is_not_a_safe_name() {
        WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());

        assertThatThrownBy(() -> snapshots.capture(engine, source, "../x", SnapshotOptions.DEFAULT))
                .isInstanceOf(dev.codeexec.engine.InvalidSpecException.class).hasMessageContaining("snapshot name");
    }

    private static SnapshotEntry entry(Snapshot snap, String path) {
        return snap.manifest().files().stream().filter(e -> e.path().equals(path)).findFirst().orElseThrow();
    }

    private String text(Workspace ws, String path) {
        return new String(engine.fs().readFile(ws, path, 0, 1 << 20).content(), StandardCharsets.UTF_8);
    }
}
