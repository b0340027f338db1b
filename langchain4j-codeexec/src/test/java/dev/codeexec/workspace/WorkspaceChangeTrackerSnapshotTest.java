package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.RunListingShell;
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
 * The core's change tracker compared with what a run listed when it ended ({@link FileChangeTracker#changes(
 * FolderSnapshot)}), the listing made by the remote backends' shell function on a host workspace: the same report as a
 * look, under the same listing rules, without reading the workspace (counted); a look where the listing cannot be
 * used.
 */
class WorkspaceChangeTrackerSnapshotTest {

    static final List<String> FOLDERS = List.of("work", "out");

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    Workspace ws;
    Path root;
    final AtomicLong visited = new AtomicLong();
    final List<FileChangeTracker> trackers = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        ws = manager.createWorkspace("snapshots", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
        Process p = new ProcessBuilder("sh", "-c", "find . -maxdepth 0 -printf '%y' && printf 'a\\0' | head -z -n 1")
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assumeTrue(p.waitFor() == 0, "GNU find and head are needed");
    }

    @AfterEach
    void tearDown() {
        trackers.forEach(FileChangeTracker::close);
        manager.close();
    }

    FileChangeTracker tracker(int comparedLimit) {
        StandardWorkspaceFS fs = StandardWorkspaceFS.builder()
                .files(w -> new WorkspaceChangeTrackerTest.CountingFiles(
                        new HostWorkspaceFiles(new PathResolver(manager.hostPath(w))), visited))
                .changeFeed(null).trackingLimits(StandardWorkspaceFS.MAX_TRACKED_ENTRIES, comparedLimit).build();
        FileChangeTracker t = fs.trackChanges(ws, FOLDERS);
        trackers.add(t);
        return t;
    }

    FolderSnapshot listing(int maxEntries) throws Exception {
        return RunListingShell.run(root, "true", FOLDERS, maxEntries, 65536).snapshot();
    }

    void write(String rel, String content) throws IOException {
        Path p = root.resolve(rel);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    void should_report_what_a_look_reports_without_reading_the_workspace_when_the_run_listed_its_folders()
            throws Exception {
        write("work/keep.txt", "same");
        write("work/grow.txt", "a");
        write("out/old.csv", "x,y");
        FileChangeTracker listed = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);
        FileChangeTracker looked = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);

        write("work/grow.txt", "abc");
        write("out/new dir/new\nname.csv", "1,2,3");
        write("work/.put-half-written", "temp");
        Files.delete(root.resolve("out/old.csv"));
        FolderSnapshot s = listing(10_000);
        visited.set(0);
        List<String> fromListing = WorkspaceChangeTrackerTest.lines(listed.changes(s));
        long reads = visited.get();

        assertThat(fromListing).containsExactly("+ out/new dir/new\nname.csv 5", "- out/old.csv",
                "~ work/grow.txt 3");
        assertThat(reads).as("the workspace was not read").isZero();
        assertThat(WorkspaceChangeTrackerTest.lines(looked.changes())).as("positive control: a look")
                .isEqualTo(fromListing);
        assertThat(visited.get()).as("positive control: a look reads").isPositive();
        assertThat(listed.changes(listing(10_000)).changes()).as("the next comparison starts from the listing")
                .isEmpty();
    }

    @Test
    void should_follow_links_as_a_look_does_when_the_run_listed_them() throws Exception {
        write("work/data.txt", "12345");
        FileChangeTracker listed = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);
        FileChangeTracker looked = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);

        Files.createSymbolicLink(root.resolve("work/inside"), Path.of("data.txt"));
        Files.createSymbolicLink(root.resolve("work/outside"), Path.of("/etc/hostname"));
        Files.createSymbolicLink(root.resolve("out/up"), Path.of("../../.."));

        List<String> fromListing = WorkspaceChangeTrackerTest.lines(listed.changes(listing(10_000)));
        assertThat(fromListing).containsExactly("+ work/inside 5");
        assertThat(WorkspaceChangeTrackerTest.lines(looked.changes())).isEqualTo(fromListing);
    }

    @Test
    void should_report_not_compared_when_the_listing_holds_more_entries_than_the_tracker_follows() throws Exception {
        write("work/a", "x");
        FileChangeTracker t = tracker(6);
        for (int i = 0; i < 8; i++) {
            write("work/f" + i, "x");
        }

        assertThat(t.changes(listing(10_000)).complete()).isFalse();
        Files.list(root.resolve("work")).filter(p -> p.getFileName().toString().startsWith("f")).forEach(p ->
                p.toFile().delete());
        assertThat(t.changes(listing(10_000)).complete()).as("not compared: the last state was too big").isFalse();
        write("work/b", "y");
        assertThat(WorkspaceChangeTrackerTest.lines(t.changes(listing(10_000)))).as("positive control: small again")
                .containsExactly("+ work/b 1");
    }

    @Test
    void should_look_itself_when_the_listing_is_missing_cut_or_of_other_folders() throws Exception {
        write("work/a", "x");
        FileChangeTracker t = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);

        write("work/b", "y");
        visited.set(0);
        assertThat(WorkspaceChangeTrackerTest.lines(t.changes(null))).containsExactly("+ work/b 1");
        assertThat(visited.get()).as("looked").isPositive();

        write("work/c", "z");
        FolderSnapshot cut = listing(2);
        assertThat(cut.complete()).isFalse();
        visited.set(0);
        assertThat(WorkspaceChangeTrackerTest.lines(t.changes(cut))).containsExactly("+ work/c 1");
        assertThat(visited.get()).as("looked").isPositive();

        write("work/d", "w");
        FolderSnapshot other = new FolderSnapshot(List.of("work"), listing(10_000).entries().stream()
                .filter(e -> e.path().startsWith("work")).toList(), true);
        visited.set(0);
        assertThat(WorkspaceChangeTrackerTest.lines(t.changes(other))).containsExactly("+ work/d 1");
        assertThat(visited.get()).as("looked").isPositive();
    }

    @Test
    void should_look_itself_when_a_folder_became_a_file() throws Exception {
        write("out/r", "x");
        FileChangeTracker t = tracker(StandardWorkspaceFS.MAX_COMPARED_ENTRIES);
        FolderSnapshot s = new FolderSnapshot(FOLDERS, List.of(new FolderSnapshot.Entry("out", FolderSnapshot.Kind.FILE,
                3, java.time.Instant.EPOCH)), true);
        visited.set(0);

        assertThat(WorkspaceChangeTrackerTest.lines(t.changes(s))).isEmpty();
        assertThat(visited.get()).as("looked").isPositive();
    }
}
