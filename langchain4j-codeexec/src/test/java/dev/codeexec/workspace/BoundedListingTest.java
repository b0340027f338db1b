package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.engine.OutputLimit;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.spi.InMemoryWorkspaceFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Listings and output collection stop walking at their limit (counted in entries the primitives hand out, not timed)
 * and say when they are incomplete, so that a cut listing is never taken for the whole.
 */
class BoundedListingTest {

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    Workspace ws;
    Path root;
    final AtomicLong visited = new AtomicLong();
    StandardWorkspaceFS fs;

    @BeforeEach
    void setUp() throws IOException {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        ws = manager.createWorkspace("bounded", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
        fs = StandardWorkspaceFS.builder().files(w -> new WorkspaceChangeTrackerTest.CountingFiles(
                new HostWorkspaceFiles(new PathResolver(manager.hostPath(w))), visited)).build();
        for (int i = 0; i < 1_000; i++) {
            Files.writeString(Files.createDirectories(root.resolve("out/d" + (i % 10))).resolve("f" + i + ".csv"),
                    "x");
        }
        visited.set(0);
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    @Test
    void should_stop_at_the_limit_and_say_more_exist_when_a_folder_holds_more() {
        FileListing l = fs.list(ws, "out", ListOptions.maxEntries(10));

        assertThat(l.entries()).hasSize(10).isSortedAccordingTo((a, b) -> a.path().compareTo(b.path()));
        assertThat(l.complete()).isFalse();
        assertThat(visited.get()).as("entries walked for 10").isLessThan(30);
    }

    @Test
    void should_say_complete_when_everything_fits() {
        FileListing l = fs.list(ws, "out/d3", ListOptions.maxEntries(100));

        assertThat(l.entries()).hasSize(100);
        assertThat(l.complete()).isTrue();
        assertThat(fs.list(ws, "out/d3", ListOptions.maxEntries(99)).complete()).isFalse();
    }

    @Test
    void should_list_one_level_and_leave_out_named_contents_unless_asked_for_them() throws IOException {
        Files.writeString(Files.createDirectories(root.resolve("runs/run_1")).resolve("log.txt"), "l");

        List<String> top = paths(fs.list(ws, ".", ListOptions.maxEntries(100).withMaxDepth(1)));
        List<String> collapsed = paths(fs.list(ws, ".", ListOptions.maxEntries(5_000).withoutContents("runs")));
        List<String> runs = paths(fs.list(ws, "runs", ListOptions.maxEntries(100).withoutContents("runs")));
        List<String> globbed = paths(fs.list(ws, "**/*.txt", ListOptions.maxEntries(100).withoutContents("runs")));

        assertThat(top).containsExactly("home", "out", "runs", "skills", "tmp", "work");
        assertThat(collapsed).contains("runs", "out/d0/f0.csv").doesNotContain("runs/run_1", "runs/run_1/log.txt");
        assertThat(runs).containsExactly("runs/run_1", "runs/run_1/log.txt");
        assertThat(globbed).isEmpty();
        assertThat(paths(fs.list(ws, "runs/**/*.txt", ListOptions.maxEntries(100).withoutContents("runs"))))
                .containsExactly("runs/run_1/log.txt");
    }

    @Test
    void should_stop_a_glob_at_the_limit() {
        FileListing l = fs.list(ws, "out/**/*.csv", ListOptions.maxEntries(5));

        assertThat(l.entries()).hasSize(5).allMatch(f -> f.path().endsWith(".csv"));
        assertThat(l.complete()).isFalse();
        assertThat(visited.get()).isLessThan(30);
    }

    @Test
    void should_stop_collecting_at_the_first_file_past_max_files() {
        OutputManifest m = fs.collectOutputs(ws, OutputSpec.builder().globs(List.of("out/**")).maxFiles(100).build());

        assertThat(m.files()).hasSize(100);
        assertThat(m.limitsHit()).containsExactly(OutputLimit.MAX_FILES);
        assertThat(visited.get()).as("entries walked to collect 100 of 1,000").isLessThan(150);
    }

    @Test
    void should_collect_everything_and_hit_no_limit_when_it_fits() {
        OutputManifest m = fs.collectOutputs(ws, OutputSpec.builder().globs(List.of("out/d1/**")).maxFiles(100)
                .build());

        assertThat(m.files()).hasSize(100);
        assertThat(m.limitsHit()).isEmpty();
    }

    @Test
    void should_not_present_a_listing_cut_by_the_walk_bound_as_complete() {
        // In memory, so that a tree past the bound of one walk is cheap to make.
        InMemoryWorkspaceFiles.Store store = new InMemoryWorkspaceFiles.Store();
        InMemoryWorkspaceFiles files = new InMemoryWorkspaceFiles(store);
        StandardWorkspaceFS mem = StandardWorkspaceFS.builder().files(w -> new InMemoryWorkspaceFiles(store)).build();
        Workspace m = new Workspace("mem", "/workspace");
        List<PutFile> many = new ArrayList<>();
        for (int i = 0; i < StandardWorkspaceFS.MAX_WALK_ENTRIES + 10; i++) {
            many.add(PutFile.of("out/aaa/f" + i, "x"));
        }
        mem.putFiles(m, many);
        files.write("out/zzz/last.csv", "x".getBytes(), 0644);

        List<FileInfo> all = mem.list(m, "out");
        FileListing bounded = mem.list(m, "out", ListOptions.maxEntries(Integer.MAX_VALUE));
        OutputManifest collected = mem.collectOutputs(m, OutputSpec.builder().globs(List.of("out/**/*.csv"))
                .build());

        assertThat(all.size()).isLessThanOrEqualTo(StandardWorkspaceFS.MAX_WALK_ENTRIES);
        assertThat(bounded.complete()).isFalse();
        assertThat(collected.limitsHit()).contains(OutputLimit.MAX_WALK_ENTRIES);
    }

    private static List<String> paths(FileListing l) {
        return l.entries().stream().map(FileInfo::path).toList();
    }
}
