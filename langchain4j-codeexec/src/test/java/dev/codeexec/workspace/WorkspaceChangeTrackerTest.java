package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.FileChange;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileChanges;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The core's change tracker on a host workspace, changed as a program would change it (plain file operations on the
 * host), with the kernel's change feed (inotify) and without it (a walk per look). Every change a program really made
 * must be reported; with the feed a look must read what changed, not the tree (counted, not timed).
 */
class WorkspaceChangeTrackerTest {

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    Workspace ws;
    Path root;
    /** Entries the primitives reported to walks, and stats made, since the last reset. */
    final AtomicLong visited = new AtomicLong();
    final List<FileChangeTracker> trackers = new ArrayList<>();

    @BeforeEach
    void setUp() {
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        ws = manager.createWorkspace("changes", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
    }

    @AfterEach
    void tearDown() {
        trackers.forEach(FileChangeTracker::close);
        manager.close();
    }

    /** A tracker on the core's rules over the host primitives, counting what they read. */
    FileChangeTracker tracker(boolean feed, int trackedLimit, int comparedLimit) {
        ChangeFeed f = feed ? HostChangeFeed.forHost(manager::hostPath) : null;
        if (feed) {
            assumeTrue(f != null, "no change feed on this host (not Linux)");
        }
        StandardWorkspaceFS fs = StandardWorkspaceFS.builder()
                .files(w -> new CountingFiles(new HostWorkspaceFiles(new PathResolver(manager.hostPath(w))), visited))
                .changeFeed(f).trackingLimits(trackedLimit, comparedLimit).build();
        FileChangeTracker t = fs.trackChanges(ws, List.of("work", "out"));
        trackers.add(t);
        return t;
    }

    FileChangeTracker tracker(boolean feed) {
        return tracker(feed, StandardWorkspaceFS.MAX_TRACKED_ENTRIES, StandardWorkspaceFS.MAX_COMPARED_ENTRIES);
    }

    static List<String> lines(FileChanges c) {
        assertThat(c.complete()).as("compared").isTrue();
        List<String> out = new ArrayList<>();
        for (FileChange f : c.changes()) {
            out.add(switch (f.kind()) {
                case CREATED -> "+ " + f.path() + " " + f.sizeBytes();
                case MODIFIED -> "~ " + f.path() + " " + f.sizeBytes();
                case DELETED -> "- " + f.path();
            });
        }
        return out;
    }

    Path write(String rel, String content) throws IOException {
        Path p = root.resolve(rel);
        Files.createDirectories(p.getParent());
        return Files.writeString(p, content);
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_report_created_modified_and_deleted_files_when_a_program_changes_them(boolean feed)
            throws IOException {
        write("work/keep.txt", "same");
        write("work/grow.txt", "a");
        write("out/old.csv", "x,y");
        FileChangeTracker t = tracker(feed);

        write("work/grow.txt", "abc");
        write("out/new.csv", "1,2,3");
        Files.delete(root.resolve("out/old.csv"));

        assertThat(lines(t.changes())).containsExactly("+ out/new.csv 5", "- out/old.csv", "~ work/grow.txt 3")
                .doesNotContain("work/keep.txt");
        assertThat(t.changes().changes()).as("the next look starts from the last").isEmpty();
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_report_a_same_size_rewrite_when_its_modification_time_moved(boolean feed) throws IOException {
        Path f = write("work/data.txt", "aaaa");
        Files.setLastModifiedTime(f, FileTime.fromMillis(1_000_000_000_000L));
        FileChangeTracker t = tracker(feed);

        Files.writeString(f, "bbbb");

        assertThat(lines(t.changes())).containsExactly("~ work/data.txt 4");
    }

    @Test
    void should_report_a_same_size_rewrite_within_the_same_clock_tick_when_the_kernel_tells()
            throws IOException {
        Path f = write("work/deep/er/data.txt", "aaaa");
        FileTime before = Files.getLastModifiedTime(f);
        FileChangeTracker t = tracker(true);

        // The rewrite keeps size and time (as one within the file system's clock granularity would): only the
        // kernel's notice tells it apart from no change at all.
        Files.writeString(f, "bbbb");
        Files.setLastModifiedTime(f, before);

        assertThat(lines(t.changes())).containsExactly("~ work/deep/er/data.txt 4");
    }

    @Test
    void should_miss_a_rewrite_that_keeps_size_and_time_when_walking_as_documented() throws IOException {
        Path f = write("work/data.txt", "aaaa");
        FileTime before = Files.getLastModifiedTime(f);
        FileChangeTracker t = tracker(false);

        Files.writeString(f, "bbbb");
        Files.setLastModifiedTime(f, before);
        write("work/other.txt", "c");

        // Positive control in the same look: the walk does see the new file.
        assertThat(lines(t.changes())).containsExactly("+ work/other.txt 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_report_renames_of_files_and_folders_and_a_rename_over_a_file(boolean feed) throws IOException {
        write("work/a.txt", "A");
        write("work/dir/x.txt", "xx");
        write("work/dir/sub/y.txt", "yyy");
        write("out/target.txt", "old");
        write("work/new.tmp", "fresh!");
        FileChangeTracker t = tracker(feed);

        Files.move(root.resolve("work/a.txt"), root.resolve("work/b.txt"));
        Files.move(root.resolve("work/dir"), root.resolve("out/moved"));
        Files.move(root.resolve("work/new.tmp"), root.resolve("out/target.txt"), StandardCopyOption.REPLACE_EXISTING);

        assertThat(lines(t.changes())).containsExactly("+ out/moved/sub/y.txt 3", "+ out/moved/x.txt 2",
                "~ out/target.txt 6", "- work/a.txt", "+ work/b.txt 1", "- work/dir/sub/y.txt", "- work/dir/x.txt",
                "- work/new.tmp");

        // The moved folder is followed at its new place.
        write("out/moved/sub/z.txt", "z");
        assertThat(lines(t.changes())).containsExactly("+ out/moved/sub/z.txt 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_report_every_file_of_a_deleted_folder_and_of_a_folder_made_with_files(boolean feed)
            throws IOException {
        for (int i = 0; i < 5; i++) {
            write("work/gone/f" + i, "g");
        }
        FileChangeTracker t = tracker(feed);

        FileTrees.deleteTree(root.resolve("work/gone"));
        // Made and filled at once, before any watch on it could exist.
        write("work/made/deep/inside/f.txt", "new");

        assertThat(lines(t.changes())).containsExactly("- work/gone/f0", "- work/gone/f1", "- work/gone/f2",
                "- work/gone/f3", "- work/gone/f4", "+ work/made/deep/inside/f.txt 3");
        write("work/made/deep/inside/g.txt", "g");
        assertThat(lines(t.changes())).containsExactly("+ work/made/deep/inside/g.txt 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_follow_a_folder_that_is_removed_and_made_again(boolean feed) throws IOException {
        write("out/a.txt", "a");
        FileChangeTracker t = tracker(feed);

        FileTrees.deleteTree(root.resolve("out"));
        assertThat(lines(t.changes())).containsExactly("- out/a.txt");
        write("out/b.txt", "bb");
        assertThat(lines(t.changes())).containsExactly("+ out/b.txt 2");
        write("out/c.txt", "c");
        assertThat(lines(t.changes())).containsExactly("+ out/c.txt 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_report_all_of_a_burst_larger_than_the_kernel_queue_of_one_folder(boolean feed) throws IOException {
        FileChangeTracker t = tracker(feed);

        // More notices for one folder than the JDK keeps per key: the watch loses track and the look reads it whole.
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            write(String.format("work/burst/f%04d", i), "b");
            expected.add(String.format("+ work/burst/f%04d 1", i));
        }

        assertThat(lines(t.changes())).containsExactlyElementsOf(expected);
        write("work/burst/after", "a");
        assertThat(lines(t.changes())).containsExactly("+ work/burst/after 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_not_report_links_out_hidden_temporary_names_or_other_folders(boolean feed) throws IOException {
        Path outside = Files.writeString(tmp.resolve("secret.txt"), "secret");
        write("work/real.txt", "real");
        FileChangeTracker t = tracker(feed);

        Files.createSymbolicLink(root.resolve("work/out-link"), outside);
        Files.createSymbolicLink(root.resolve("work/in-link"), root.resolve("work/real.txt"));
        write("work/" + WorkspaceFiles.WRITE_TEMP_PREFIX + "x.tmp", "half");
        write("runs/run_1/log.txt", "log");
        write("tmp/scratch", "s");

        assertThat(lines(t.changes())).containsExactly("+ work/in-link 4");
    }

    @Test
    void should_read_only_what_changed_when_a_large_tree_changes_deep_inside() throws IOException {
        for (int d = 0; d < 100; d++) {
            for (int f = 0; f < 100; f++) {
                write("work/tree/d" + d + "/s/f" + f, "content");
            }
        }
        FileChangeTracker t = tracker(true);
        assertThat(t.trackedEntries()).as("10,000 files and their folders").isGreaterThan(10_000);
        visited.set(0);

        assertThat(lines(t.changes())).isEmpty();
        assertThat(visited.get()).as("entries read by a look when nothing changed").isLessThan(10);

        write("work/tree/d57/s/f3", "changed!");
        write("work/tree/d99/s/new", "n");
        Files.delete(root.resolve("work/tree/d0/s/f0"));
        visited.set(0);
        assertThat(lines(t.changes())).containsExactly("- work/tree/d0/s/f0", "~ work/tree/d57/s/f3 8",
                "+ work/tree/d99/s/new 1");
        assertThat(visited.get()).as("entries read by a look after three changes").isLessThan(100);
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_say_nothing_was_compared_when_the_folders_hold_more_than_the_limit(boolean feed) throws IOException {
        for (int i = 0; i < 30; i++) {
            write("work/f" + i, "x");
        }
        FileChangeTracker t = tracker(feed, 20, 20);

        write("work/new", "n");
        FileChanges c = t.changes();
        assertThat(c.complete()).isFalse();
        assertThat(c.changes()).isEmpty();
        assertThat(c.limit()).isEqualTo(20);
        assertThat(t.trackedEntries()).isZero();

        for (int i = 0; i < 25; i++) {
            Files.delete(root.resolve("work/f" + i));
        }
        // Small enough again: the first look that indexes the tree cannot compare, the next one does.
        FileChanges again = t.changes();
        for (int i = 0; i < WorkspaceChangeTracker.RETRY_LOOKS && t.trackedEntries() == 0; i++) {
            again = t.changes();
        }
        assertThat(again.complete()).isFalse();
        assertThat(t.trackedEntries()).isPositive();
        write("work/last", "l");
        assertThat(lines(t.changes())).containsExactly("+ work/last 1");
    }

    @ParameterizedTest(name = "feed={0}")
    @ValueSource(booleans = {true, false})
    void should_refuse_a_look_after_close_and_release_what_it_held(boolean feed) throws IOException {
        write("work/a", "a");
        FileChangeTracker t = tracker(feed);
        assertThat(t.trackedEntries()).isPositive();

        t.close();
        t.close();

        assertThat(t.trackedEntries()).isZero();
        assertThatThrownBy(t::changes).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void should_keep_two_trackers_of_one_workspace_apart_when_one_closes() throws IOException {
        FileChangeTracker first = tracker(true);
        FileChangeTracker second = tracker(true);

        write("work/a", "a");
        assertThat(lines(first.changes())).containsExactly("+ work/a 1");
        first.close();
        write("work/b", "bb");

        // The kernel gives one watch per folder: closing the first must not have cancelled the second's.
        assertThat(lines(second.changes())).containsExactly("+ work/a 1", "+ work/b 2");
    }

    @Test
    void should_read_the_folders_whole_when_the_feed_lost_track_and_walk_when_it_stopped() throws IOException {
        write("work/a", "a");
        java.util.Queue<ChangeFeed.Notices> answers = new java.util.LinkedList<>();
        boolean[] closed = {false};
        ChangeFeed scripted = (w, folders) -> new ChangeFeed.Watch() {
            @Override
            public ChangeFeed.Notices poll() {
                return answers.poll();
            }

            @Override
            public void close() {
                closed[0] = true;
            }
        };
        StandardWorkspaceFS fs = StandardWorkspaceFS.builder()
                .files(w -> new HostWorkspaceFiles(new PathResolver(manager.hostPath(w)))).changeFeed(scripted)
                .build();
        FileChangeTracker t = fs.trackChanges(ws, List.of("work", "out"));
        trackers.add(t);

        // Notices for what did not change, for paths outside the folders and for nothing at all: no wrong report.
        write("work/b", "bb");
        write("runs/x", "x");
        answers.add(new ChangeFeed.Notices(java.util.Map.of("work/b", false, "runs/x", false, "work/none", true,
                "out", false), true, false));
        assertThat(lines(t.changes())).containsExactly("+ work/b 2");

        // Lost track: the look reads everything, and so finds what no notice named.
        write("work/c", "c");
        answers.add(ChangeFeed.Notices.lostTrack());
        assertThat(lines(t.changes())).containsExactly("+ work/c 1");

        // Stopped: the tracker walks from then on, and still sees every change.
        Files.delete(root.resolve("work/a"));
        answers.add(null);
        assertThat(lines(t.changes())).containsExactly("- work/a");
        write("work/d", "d");
        assertThat(lines(t.changes())).containsExactly("+ work/d 1");
        assertThat(answers).isEmpty();
    }

    /** Host primitives that count the entries they report to walks and the stats they answer. */
    static final class CountingFiles implements WorkspaceFiles {
        private final WorkspaceFiles d;
        private final AtomicLong count;

        CountingFiles(WorkspaceFiles d, AtomicLong count) {
            this.d = d;
            this.count = count;
        }

        @Override
        public String resolve(String path) {
            return d.resolve(path);
        }

        @Override
        public Optional<FileEntry> stat(String path) {
            count.incrementAndGet();
            return d.stat(path);
        }

        @Override
        public void walk(String dir, WalkVisitor visitor) {
            d.walk(dir, e -> {
                count.incrementAndGet();
                return visitor.visit(e);
            });
        }

        @Override
        public FileWindow read(String path, long offset, int maxBytes) {
            return d.read(path, offset, maxBytes);
        }

        @Override
        public void write(String path, byte[] content, int mode) {
            d.write(path, content, mode);
        }

        @Override
        public void mkdirs(String path) {
            d.mkdirs(path);
        }

        @Override
        public void delete(String path) {
            d.delete(path);
        }

        @Override
        public void importTree(ImportSource source, String to, boolean readOnly) {
            d.importTree(source, to, readOnly);
        }

        @Override
        public void export(List<String> paths, ExportVisitor visitor) {
            d.export(paths, visitor);
        }
    }
}
