package dev.codeexec.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.workspace.snapshot.ReceiptDifference;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotEntry;
import dev.codeexec.workspace.snapshot.SnapshotIntegrityException;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The snapshot contract of a backend: a workspace captured through the engine's {@code WorkspaceFS} comes back with a
 * clean receipt on the same engine and on another one (the local engine, both ways), a link made by a program is
 * skipped, a tampered content is refused with the target left as it was, and the receipt sees a change a program makes
 * after a restore. A backend's test class extends this and implements {@link #createEngine()}; snapshots need nothing
 * else from the backend, so a failure here is a bug of its file primitives.
 */
public abstract class SnapshotContractTest {

    protected Engine engine;
    private LocalEngine local;
    private Path localRoot;
    private final InMemoryArtifactService store = new InMemoryArtifactService();
    private final WorkspaceSnapshots snapshots = new WorkspaceSnapshots(store);

    /** A fresh engine under test; closed after the test. */
    protected abstract Engine createEngine();

    @BeforeEach
    void createEngines() throws Exception {
        engine = createEngine();
        localRoot = Files.createTempDirectory("snapshot-contract");
        local = LocalEngine.builder().rootDir(localRoot).build();
    }

    @AfterEach
    void closeEngines() {
        try {
            if (engine != null) {
                engine.close();
            }
        } finally {
            local.close();
            try (java.util.stream.Stream<Path> s = Files.walk(localRoot)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (java.io.IOException ignored) {
                // a temporary directory left behind is harmless
            }
        }
    }

    private Workspace workspace(Engine e, String id) {
        return e.manager().createWorkspace(id, WorkspacePolicy.DEFAULT);
    }

    private void fill(Workspace ws) {
        byte[] binary = new byte[70_000];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) i;
        }
        engine.fs().putFiles(ws, List.of(PutFile.of("work/data.csv", "a,b\n1,2\n"),
                PutFile.of("work/deep/er/binary.bin", binary),
                PutFile.of("work/run.sh", "#!/bin/sh\necho hi\n".getBytes(StandardCharsets.UTF_8), 0755),
                PutFile.of("out/report.md", "# r\n"), PutFile.of("home/.profile", "x=1\n"),
                PutFile.of("work/empty.txt", new byte[0])));
    }

    private String text(Engine e, Workspace ws, String path) {
        return e.fs().readFile(ws, path, 0, 1 << 20).contentAsString();
    }

    @Test
    void should_restore_with_a_clean_receipt_when_captured_and_restored_on_this_engine() {
        Workspace source = workspace(engine, "snap-src");
        Workspace target = workspace(engine, "snap-dst");
        fill(source);

        Snapshot s = snapshots.capture(engine, source, "contract", SnapshotOptions.DEFAULT);
        RestoreReceipt r = snapshots.restore(engine, target, "contract", s.version());

        assertThat(s.manifest().fileCount()).isEqualTo(6);
        assertThat(r.clean()).as(r.summary()).isTrue();
        assertThat(text(engine, target, "work/data.csv")).isEqualTo("a,b\n1,2\n");
        assertThat(engine.fs().readFile(target, "work/deep/er/binary.bin", 0, 1 << 20).sizeBytes()).isEqualTo(70_000);
    }

    @Test
    void should_restore_with_a_clean_receipt_when_moved_to_the_local_engine_and_back() {
        Workspace source = workspace(engine, "snap-src");
        fill(source);
        snapshots.capture(engine, source, "out", SnapshotOptions.DEFAULT);

        Workspace onLocal = workspace(local, "snap-local");
        RestoreReceipt there = snapshots.restore(local, onLocal, "out", null);
        local.fs().putFiles(onLocal, List.of(PutFile.of("out/added-on-local.txt", "local")));
        snapshots.capture(local, onLocal, "back", SnapshotOptions.DEFAULT);
        Workspace back = workspace(engine, "snap-back");
        RestoreReceipt home = snapshots.restore(engine, back, "back", null);

        assertThat(there.clean()).as(there.summary()).isTrue();
        assertThat(home.clean()).as(home.summary()).isTrue();
        assertThat(text(engine, back, "out/added-on-local.txt")).isEqualTo("local");
        assertThat(snapshots.manifest("back", null).sourceEngine()).isEqualTo(local.name());
    }

    @Test
    void should_skip_a_link_a_program_made_when_capturing() {
        Workspace source = workspace(engine, "snap-src");
        engine.fs().putFiles(source, List.of(PutFile.of("work/real.txt", "real")));
        assertThat(engine.runner().runProgram(source, RunProgramSpec.shell(
                "ln -s /etc/passwd work/outside && ln -s real.txt work/inside").build()).exitCode()).isZero();

        Snapshot s = snapshots.capture(engine, source, "links", SnapshotOptions.DEFAULT);

        assertThat(s.manifest().files()).extracting(SnapshotEntry::path).containsExactly("work/real.txt");
        assertThat(s.manifest().skipped()).extracting(SnapshotEntry::path)
                .containsExactlyInAnyOrder("work/outside", "work/inside");
    }

    @Test
    void should_refuse_a_tampered_snapshot_and_keep_the_target_when_restoring() {
        Workspace source = workspace(engine, "snap-src");
        Workspace target = workspace(engine, "snap-dst");
        fill(source);
        Snapshot s = snapshots.capture(engine, source, "t", SnapshotOptions.DEFAULT);
        engine.fs().putFiles(target, List.of(PutFile.of("work/data.csv", "theirs")));
        SnapshotEntry data = s.manifest().files().stream().filter(e -> e.path().equals("work/data.csv"))
                .findFirst().orElseThrow();
        byte[] pack = store.load(s.packRef()).content();
        pack[(int) data.offset()] ^= 1; // one bit of one file, the pack's length unchanged
        store.delete(s.packRef().name());
        assertThat(store.save(s.packRef().name(), pack, null)).isEqualTo(s.packRef());

        assertThatThrownBy(() -> snapshots.restore(engine, target, "t", null))
                .isInstanceOf(SnapshotIntegrityException.class).hasMessageContaining("work/data.csv");
        assertThat(text(engine, target, "work/data.csv")).isEqualTo("theirs");
        assertThat(engine.fs().stat(target, "out/report.md")).isEmpty();
    }

    @Test
    void should_report_a_file_a_program_changed_when_checking_after_a_restore() {
        Workspace source = workspace(engine, "snap-src");
        Workspace target = workspace(engine, "snap-dst");
        fill(source);
        snapshots.capture(engine, source, "c", SnapshotOptions.DEFAULT);
        assertThat(snapshots.restore(engine, target, "c", null).clean()).isTrue();

        assertThat(engine.runner().runProgram(target, RunProgramSpec.shell("echo more >> work/data.csv").build())
                .exitCode()).isZero();
        RestoreReceipt r = snapshots.check(engine, target, "c", null);

        assertThat(r.differences()).extracting(ReceiptDifference::kind, ReceiptDifference::path)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(ReceiptDifference.Kind.CHANGED, "work/data.csv"));
    }
}
