package dev.codeexec.workspace.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract of {@link WorkspaceFiles}: what every provider of the file primitives obeys, whatever carries the bytes
 * (host calls, a tar archive, HTTP). A provider's test class extends this, creates a fresh workspace per test and
 * implements the few fixtures the primitives cannot make themselves: symbolic links (including ones leading
 * outside), a check that the things outside are untouched, and removing the workspace.
 *
 * <p>Sources of imports are host trees: the test builds them in {@link #hostSources}, on the machine running the test.
 * Capability-dependent tests switch on {@link #supportsUnixMetadata()} and {@link #supportsSpecialFiles()}.
 */
public abstract class WorkspaceFilesContractTest {

    /** {@link #createLink} target: a regular file outside the workspace holding {@link #SECRET}. */
    protected static final String OUTSIDE_FILE = "<outside file>";

    /** {@link #createLink} target: a directory outside the workspace holding {@code secret.txt} ({@link #SECRET}). */
    protected static final String OUTSIDE_DIR = "<outside directory>";

    /** {@link #createLink} target: nothing (a dangling link). */
    protected static final String MISSING = "<missing>";

    /** What the files outside the workspace hold. */
    protected static final String SECRET = "secret";

    /** Host trees to import from, on the machine running the test. */
    @TempDir
    protected Path hostSources;

    private WorkspaceFiles files;

    /**
     * Creates a fresh workspace and, outside it, the file and directory that {@link #OUTSIDE_FILE} and
     * {@link #OUTSIDE_DIR} name. Called before each test; the workspace may hold the standard layout.
     */
    protected abstract void createWorkspace() throws Exception;

    /** The primitives of the workspace under test: a new instance per call, as the core obtains them. */
    protected abstract WorkspaceFiles files();

    /**
     * Creates a symbolic link at workspace path {@code path} (its parents exist or are created) pointing to
     * {@code target}: a workspace-relative path, or {@link #OUTSIDE_FILE}, {@link #OUTSIDE_DIR}, {@link #MISSING}.
     */
    protected abstract void createLink(String path, String target) throws Exception;

    /** True when the outside file and directory hold exactly what {@link #createWorkspace} put there. */
    protected abstract boolean outsideIntact() throws Exception;

    /** Removes the workspace behind the provider's back (as a cleanup or a reaper would). */
    protected abstract void removeWorkspace() throws Exception;

    /** Where the workspace lives (a host or container path): no error message may contain it. */
    protected abstract String location();

    /** Releases what {@link #createWorkspace} made; the default does nothing. */
    @AfterEach
    protected void releaseWorkspace() throws Exception {
    }

    /** True when the backend keeps Unix modes and modification times (write, stat, import). */
    protected boolean supportsUnixMetadata() {
        return true;
    }

    /** True when {@link #createFifo} can make a FIFO in the workspace. */
    protected boolean supportsSpecialFiles() {
        return false;
    }

    /** Creates a FIFO at a workspace path, when {@link #supportsSpecialFiles()}. */
    protected void createFifo(String path) throws Exception {
        throw new UnsupportedOperationException("no special files on this backend");
    }

    @BeforeEach
    void setUpWorkspace() throws Exception {
        createWorkspace();
        files = files();
        files.mkdirs("work");
        files.mkdirs("out");
        files.write("work/keep.txt", utf8("keep"), 0644);
    }

    // ---------------------------------------------------------------- write and read

    @Test
    void should_read_back_content_size_and_mode_when_written() {
        files.write("work/a.txt", utf8("hello"), 0640);

        FileWindow w = files.read("work/a.txt", 0, 100);
        FileEntry e = files.stat("work/a.txt").orElseThrow();

        assertThat(w.content()).isEqualTo(utf8("hello"));
        assertThat(w.size()).isEqualTo(5);
        assertThat(e.type()).isEqualTo(EntryType.FILE);
        assertThat(e.size()).isEqualTo(5);
        assertThat(e.path()).isEqualTo("work/a.txt");
        if (supportsUnixMetadata()) {
            assertThat(Integer.toOctalString(e.mode())).isEqualTo("640");
        }
    }

    @Test
    void should_write_every_file_of_a_batch_with_its_mode_and_replace_a_link() throws Exception {
        createLink("out/victim", OUTSIDE_FILE);

        files.writeAll(List.of(dev.codeexec.engine.PutFile.of("work/b/one.txt", utf8("one"), 0640),
                dev.codeexec.engine.PutFile.of("work/b/deeper/two.bin", new byte[] {2, 0, 2}, 0600),
                dev.codeexec.engine.PutFile.of("out/victim", utf8("mine"))));

        assertThat(files.read("work/b/one.txt", 0, 10).content()).isEqualTo(utf8("one"));
        assertThat(files.read("work/b/deeper/two.bin", 0, 10).content()).containsExactly(2, 0, 2);
        assertThat(files.stat("out/victim").orElseThrow().type()).isEqualTo(EntryType.FILE);
        assertThat(files.read("out/victim", 0, 10).content()).isEqualTo(utf8("mine"));
        if (supportsUnixMetadata()) {
            assertThat(Integer.toOctalString(files.stat("work/b/one.txt").orElseThrow().mode())).isEqualTo("640");
            assertThat(Integer.toOctalString(files.stat("work/b/deeper/two.bin").orElseThrow().mode()))
                    .isEqualTo("600");
        }
        assertThat(outsideIntact()).isTrue();
        assertNoTemporaryNames();
    }

    @Test
    void should_create_missing_parents_when_writing() {
        files.write("work/deep/er/x.bin", new byte[] {0, 1, 2}, 0600);

        assertThat(files.stat("work/deep").orElseThrow().type()).isEqualTo(EntryType.DIRECTORY);
        assertThat(files.stat("work/deep/er").orElseThrow().type()).isEqualTo(EntryType.DIRECTORY);
        assertThat(files.read("work/deep/er/x.bin", 0, 10).content()).containsExactly(0, 1, 2);
    }

    @Test
    void should_show_old_or_new_content_never_a_part_when_overwriting() throws Exception {
        byte[] a = new byte[256 << 10];
        byte[] b = new byte[128 << 10];
        Arrays.fill(a, (byte) 'a');
        Arrays.fill(b, (byte) 'b');
        files.write("work/atomic/big.bin", a, 0644);
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            Future<List<String>> seen = reader.submit(() -> {
                List<String> bad = new ArrayList<>();
                WorkspaceFiles own = files();
                while (!done.get()) {
                    byte[] got = own.read("work/atomic/big.bin", 0, a.length + 1).content();
                    if (!Arrays.equals(got, a) && !Arrays.equals(got, b)) {
                        bad.add(got.length + " bytes");
                    }
                }
                return bad;
            });
            for (int i = 0; i < 30; i++) {
                files.write("work/atomic/big.bin", i % 2 == 0 ? b : a, 0644);
            }
            done.set(true);

            assertThat(seen.get(60, TimeUnit.SECONDS)).as("partial contents seen").isEmpty();
        } finally {
            done.set(true);
            reader.shutdownNow();
        }
        assertThat(entries("work/atomic")).containsOnlyKeys("work/atomic/big.bin");
        assertNoTemporaryNames();
    }

    @Test
    void should_leave_nothing_behind_when_a_write_is_refused() {
        files.write("work/r/file", utf8("f"), 0644);

        for (String bad : List.of(".", "work/r", "work/r/file/below.txt", "work/r/file/deeper/below.txt")) {
            assertThatThrownBy(() -> files.write(bad, utf8("x"), 0644)).as(bad)
                    .isInstanceOf(InvalidSpecException.class);
        }

        assertThat(files.stat("work/r").orElseThrow().type()).isEqualTo(EntryType.DIRECTORY);
        assertThat(entries("work/r")).containsOnlyKeys("work/r/file");
        assertThat(files.read("work/r/file", 0, 10).content()).isEqualTo(utf8("f"));
        assertNoTemporaryNames();
    }

    @Test
    void should_replace_link_not_write_through_it_when_target_is_a_link() throws Exception {
        createLink("out/victim", OUTSIDE_FILE);

        files.write("out/victim", utf8("mine"), 0644);

        assertThat(outsideIntact()).isTrue();
        assertThat(files.stat("out/victim").orElseThrow().type()).isEqualTo(EntryType.FILE);
        assertThat(files.read("out/victim", 0, 10).content()).isEqualTo(utf8("mine"));
    }

    @Test
    void should_refuse_write_when_a_parent_link_leads_outside() throws Exception {
        createLink("out/up", OUTSIDE_DIR);

        assertThatThrownBy(() -> files.write("out/up/x.txt", utf8("evil"), 0644))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.write("out/up/secret.txt", utf8("evil"), 0644))
                .isInstanceOf(PathEscapeException.class);

        assertThat(outsideIntact()).isTrue();
    }

    @Test
    void should_read_windows_and_nothing_past_the_end() {
        files.write("work/w.txt", utf8("0123456789"), 0644);

        assertThat(files.read("work/w.txt", 2, 3)).isEqualTo(new FileWindow(utf8("234"), 10));
        assertThat(files.read("work/w.txt", 8, 100)).isEqualTo(new FileWindow(utf8("89"), 10));
        assertThat(files.read("work/w.txt", 10, 5)).isEqualTo(new FileWindow(new byte[0], 10));
        assertThat(files.read("work/w.txt", 50, 10)).isEqualTo(new FileWindow(new byte[0], 10));
        assertThat(files.read("work/w.txt", 0, 0)).isEqualTo(new FileWindow(new byte[0], 10));
        files.write("work/empty", new byte[0], 0644);
        assertThat(files.read("work/empty", 0, 10)).isEqualTo(new FileWindow(new byte[0], 0));
    }

    @Test
    void should_refuse_reading_what_is_not_a_regular_file() {
        assertThatThrownBy(() -> files.read("work/none", 0, 10)).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> files.read("work", 0, 10)).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> files.read("work/keep.txt/below", 0, 10)).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    @EnabledIf("supportsSpecialFiles")
    void should_refuse_a_fifo_without_blocking() throws Exception {
        createFifo("out/pipe");

        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertThat(files.stat("out/pipe").orElseThrow().type()).isEqualTo(EntryType.OTHER);
            assertThat(entries("out")).containsEntry("out/pipe", EntryType.OTHER);
            assertThatThrownBy(() -> files.read("out/pipe", 0, 10)).isInstanceOf(InvalidSpecException.class);
            assertThatThrownBy(() -> files.export(List.of("out/pipe"), (p, s, in) -> true))
                    .isInstanceOf(InvalidSpecException.class);
        });
    }

    // ---------------------------------------------------------------- stat, walk, resolve: links are not followed

    @Test
    void should_report_links_as_links_when_stat_and_walk() throws Exception {
        createLinks();

        for (String link : List.of("out/in", "out/file-out", "out/dir-out", "out/dangling", "out/workdir")) {
            assertThat(files.stat(link)).as(link).get().extracting(FileEntry::type).isEqualTo(EntryType.LINK);
        }
        assertThat(entries("out")).containsExactlyInAnyOrderEntriesOf(Map.of("out/in", EntryType.LINK,
                "out/file-out", EntryType.LINK, "out/dir-out", EntryType.LINK, "out/dangling", EntryType.LINK,
                "out/workdir", EntryType.LINK));
        assertThat(entries(".")).doesNotContainKeys("out/dir-out/secret.txt", "out/workdir/keep.txt");
        assertThat(outsideIntact()).isTrue();
    }

    @Test
    void should_report_nothing_when_stat_finds_nothing() {
        assertThat(files.stat("work/none")).isEmpty();
        assertThat(files.stat("work/none/deeper")).isEmpty();
        assertThat(files.stat("work/keep.txt/below")).isEmpty();
        assertThat(files.stat(".")).get().extracting(FileEntry::type).isEqualTo(EntryType.DIRECTORY);
    }

    @Test
    void should_walk_depth_first_in_pre_order_and_honour_skip_and_stop() {
        for (String f : List.of("work/t/a/b/c.txt", "work/t/a/d.txt", "work/t/e.txt", "work/t/f/g.txt")) {
            files.write(f, utf8(f), 0644);
        }
        List<String> order = new ArrayList<>();
        files.walk("work/t", e -> {
            order.add(e.path());
            return WalkAction.CONTINUE;
        });

        assertThat(order).containsExactlyInAnyOrder("work/t/a", "work/t/a/b", "work/t/a/b/c.txt", "work/t/a/d.txt",
                "work/t/e.txt", "work/t/f", "work/t/f/g.txt");
        for (String p : order) {
            String parent = p.substring(0, p.lastIndexOf('/'));
            if (!parent.equals("work/t")) {
                assertThat(order.indexOf(parent)).as(p).isLessThan(order.indexOf(p));
            }
        }
        // Depth first: what a directory holds comes right after it, before its siblings.
        int a = order.indexOf("work/t/a");
        assertThat(order.subList(a + 1, a + 4)).containsExactlyInAnyOrder("work/t/a/b", "work/t/a/b/c.txt",
                "work/t/a/d.txt");

        List<String> skipped = new ArrayList<>();
        files.walk("work/t", e -> {
            skipped.add(e.path());
            return e.path().equals("work/t/a") ? WalkAction.SKIP_SUBTREE : WalkAction.CONTINUE;
        });
        assertThat(skipped).containsExactlyInAnyOrder("work/t/a", "work/t/e.txt", "work/t/f", "work/t/f/g.txt");

        List<String> stopped = new ArrayList<>();
        files.walk("work/t", e -> {
            stopped.add(e.path());
            return WalkAction.STOP;
        });
        assertThat(stopped).hasSize(1);
    }

    @Test
    void should_walk_nothing_when_dir_is_missing_or_a_file() {
        List<FileEntry> seen = new ArrayList<>();

        files.walk("work/none", e -> {
            seen.add(e);
            return WalkAction.CONTINUE;
        });
        files.walk("work/keep.txt", e -> {
            seen.add(e);
            return WalkAction.CONTINUE;
        });

        assertThat(seen).isEmpty();
    }

    @Test
    void should_report_sizes_and_types_when_walking() {
        files.write("work/s/ten.txt", utf8("0123456789"), 0644);
        files.mkdirs("work/s/empty");

        Map<String, FileEntry> got = new LinkedHashMap<>();
        files.walk("work/s", e -> {
            got.put(e.path(), e);
            return WalkAction.CONTINUE;
        });

        assertThat(got.get("work/s/ten.txt").type()).isEqualTo(EntryType.FILE);
        assertThat(got.get("work/s/ten.txt").size()).isEqualTo(10);
        assertThat(got.get("work/s/empty").type()).isEqualTo(EntryType.DIRECTORY);
    }

    @Test
    void should_follow_links_inside_and_refuse_links_out_when_resolving() throws Exception {
        createLinks();

        assertThat(files.resolve("out/in")).isEqualTo("work/keep.txt");
        assertThat(files.resolve("out/workdir/keep.txt")).isEqualTo("work/keep.txt");
        assertThat(files.resolve("out/workdir")).isEqualTo("work");
        assertThat(files.resolve("work/missing/x")).isEqualTo("work/missing/x");
        assertThat(files.resolve("work/keep.txt")).isEqualTo("work/keep.txt");
        assertThat(files.resolve(".")).isEqualTo(".");
        for (String out : List.of("out/file-out", "out/dir-out", "out/dir-out/secret.txt", "out/dangling")) {
            assertThatThrownBy(() -> files.resolve(out)).as(out).isInstanceOf(PathEscapeException.class);
        }
    }

    // ---------------------------------------------------------------- links out are never read or written through

    @Test
    void should_never_read_through_a_link_out_of_the_workspace() throws Exception {
        createLinks();

        for (String out : List.of("out/file-out", "out/dir-out/secret.txt", "out/dangling")) {
            assertThatThrownBy(() -> files.read(out, 0, 100)).as(out).isInstanceOf(PathEscapeException.class);
            assertThatThrownBy(() -> files.export(List.of(out), (p, s, in) -> {
                throw new AssertionError("opened " + p);
            })).as(out).isInstanceOf(PathEscapeException.class);
        }
        // A link inside the workspace is followed.
        assertThat(files.read("out/in", 0, 100).content()).isEqualTo(utf8("keep"));
        assertThat(files.read("out/workdir/keep.txt", 0, 100).content()).isEqualTo(utf8("keep"));
    }

    @Test
    void should_refuse_every_operation_below_a_link_out() throws Exception {
        createLinks();
        List<FileEntry> seen = new ArrayList<>();

        assertThatThrownBy(() -> files.stat("out/dir-out/secret.txt")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.walk("out/dir-out", e -> {
            seen.add(e);
            return WalkAction.CONTINUE;
        })).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.mkdirs("out/dir-out/new")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.delete("out/dir-out/secret.txt")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.importTree(hostTree("one.txt", "x"), "out/dir-out/in", false))
                .isInstanceOf(PathEscapeException.class);

        assertThat(seen).isEmpty();
        assertThat(outsideIntact()).isTrue();
    }

    // ---------------------------------------------------------------- mkdirs and delete

    @Test
    void should_create_parents_and_accept_existing_directories_when_making_directories() throws Exception {
        createLink("out/workdir", "work");

        files.mkdirs("work/a/b/c");
        files.mkdirs("work/a/b/c");
        files.mkdirs("work");
        files.mkdirs("out/workdir/via-link");

        assertThat(files.stat("work/a/b/c")).get().extracting(FileEntry::type).isEqualTo(EntryType.DIRECTORY);
        assertThat(files.stat("work/via-link")).get().extracting(FileEntry::type).isEqualTo(EntryType.DIRECTORY);
        assertThatThrownBy(() -> files.mkdirs("work/keep.txt")).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> files.mkdirs("work/keep.txt/sub")).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_delete_tree_without_following_links_inside_it() throws Exception {
        files.write("work/t/a.txt", utf8("a"), 0644);
        files.write("work/t/sub/b.txt", utf8("b"), 0644);
        createLink("work/t/sub/dir-out", OUTSIDE_DIR);
        createLink("work/t/file-out", OUTSIDE_FILE);
        createLink("work/t/keep-link", "work/keep.txt");

        files.delete("work/t");

        assertThat(files.stat("work/t")).isEmpty();
        assertThat(files.read("work/keep.txt", 0, 10).content()).isEqualTo(utf8("keep"));
        assertThat(outsideIntact()).isTrue();
    }

    @Test
    void should_delete_a_link_not_its_target() throws Exception {
        createLinks();

        for (String link : List.of("out/in", "out/file-out", "out/dir-out", "out/dangling", "out/workdir")) {
            files.delete(link);
            assertThat(files.stat(link)).as(link).isEmpty();
        }

        assertThat(files.read("work/keep.txt", 0, 10).content()).isEqualTo(utf8("keep"));
        assertThat(files.stat("work")).get().extracting(FileEntry::type).isEqualTo(EntryType.DIRECTORY);
        assertThat(outsideIntact()).isTrue();
    }

    @Test
    void should_do_nothing_for_a_missing_path_and_refuse_the_root_when_deleting() {
        assertThatCode(() -> files.delete("work/none")).doesNotThrowAnyException();
        assertThatCode(() -> files.delete("work/none/deeper")).doesNotThrowAnyException();

        assertThatThrownBy(() -> files.delete(".")).isInstanceOf(InvalidSpecException.class);
        assertThat(files.stat("work/keep.txt")).isPresent();
    }

    // ---------------------------------------------------------------- export

    @Test
    void should_export_files_in_order_and_stop_when_the_visitor_says_so() {
        files.write("out/a.txt", utf8("A"), 0644);
        files.write("out/b.txt", utf8("BB"), 0644);
        files.write("out/c/d.txt", utf8("DDD"), 0644);
        Map<String, String> got = new LinkedHashMap<>();

        files.export(List.of("out/a.txt", "out/c/d.txt", "out/b.txt"), (p, size, in) -> {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            got.put(p, size + ":" + text);
            return true;
        });
        List<String> first = new ArrayList<>();
        files.export(List.of("out/a.txt", "out/none", "out/c"), (p, size, in) -> {
            first.add(p);
            return false; // out/none and the directory out/c are never opened
        });

        assertThat(got).containsExactly(Map.entry("out/a.txt", "1:A"), Map.entry("out/c/d.txt", "3:DDD"),
                Map.entry("out/b.txt", "2:BB"));
        assertThat(first).containsExactly("out/a.txt");
    }

    @Test
    void should_let_the_visitor_read_part_of_a_file_when_exporting() {
        files.write("out/long.txt", utf8("0123456789"), 0644);
        files.write("out/next.txt", utf8("next"), 0644);
        List<String> got = new ArrayList<>();

        files.export(List.of("out/long.txt", "out/next.txt"), (p, size, in) -> {
            got.add(new String(in.readNBytes(3), StandardCharsets.UTF_8) + "/" + size);
            return true;
        });

        assertThat(got).containsExactly("012/10", "nex/4");
    }

    @Test
    void should_refuse_exporting_what_is_not_a_regular_file() {
        assertThatThrownBy(() -> files.export(List.of("out/none"), (p, s, in) -> true))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> files.export(List.of("work"), (p, s, in) -> true))
                .isInstanceOf(InvalidSpecException.class);
    }

    // ---------------------------------------------------------------- import

    @Test
    void should_import_host_tree_with_contents_modes_and_times() throws Exception {
        Path src = Files.createDirectories(hostSources.resolve("tree"));
        Files.writeString(src.resolve("a.txt"), "A");
        Files.createDirectories(src.resolve("sub/empty"));
        Files.writeString(src.resolve("sub/run.sh"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(src.resolve("a.txt"), PosixFilePermissions.fromString("rw-r-----"));
        Files.setPosixFilePermissions(src.resolve("sub/run.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Instant then = Instant.parse("2021-03-04T05:06:07Z");
        Files.setLastModifiedTime(src.resolve("a.txt"), FileTime.from(then));

        ImportSource source = ImportSource.ofHostPath(src.toRealPath());
        files.importTree(source, "work/in", false);

        assertThat(source.sizeBytes()).isEqualTo(1 + "#!/bin/sh\n".length());
        assertThat(entries("work/in")).containsExactlyInAnyOrderEntriesOf(Map.of("work/in/a.txt", EntryType.FILE,
                "work/in/sub", EntryType.DIRECTORY, "work/in/sub/empty", EntryType.DIRECTORY,
                "work/in/sub/run.sh", EntryType.FILE));
        assertThat(files.read("work/in/a.txt", 0, 10).content()).isEqualTo(utf8("A"));
        assertThat(files.read("work/in/sub/run.sh", 0, 100).content()).isEqualTo(utf8("#!/bin/sh\n"));
        if (supportsUnixMetadata()) {
            assertThat(Integer.toOctalString(files.stat("work/in/a.txt").orElseThrow().mode())).isEqualTo("640");
            assertThat(Integer.toOctalString(files.stat("work/in/sub/run.sh").orElseThrow().mode()))
                    .isEqualTo("755");
            assertThat(files.stat("work/in/a.txt").orElseThrow().modifiedTime().truncatedTo(ChronoUnit.SECONDS))
                    .isEqualTo(then);
        }
        assertNoTemporaryNames();
    }

    @Test
    void should_import_a_single_host_file_as_a_file() throws Exception {
        ImportSource one = hostTree("one.txt", "just one");

        files.importTree(one, "work/copy.txt", false);

        assertThat(files.stat("work/copy.txt")).get().extracting(FileEntry::type).isEqualTo(EntryType.FILE);
        assertThat(files.read("work/copy.txt", 0, 100).content()).isEqualTo(utf8("just one"));
        assertThat(one.sizeBytes()).isEqualTo(8);
    }

    @Test
    void should_leave_links_out_when_importing_a_host_tree() throws Exception {
        Path secrets = Files.createDirectories(hostSources.resolve("not-granted"));
        Files.writeString(secrets.resolve("host-secret.txt"), "host secret");
        Path src = Files.createDirectories(hostSources.resolve("granted"));
        Files.writeString(src.resolve("real.txt"), "real");
        Files.createSymbolicLink(src.resolve("to-secret"), secrets.resolve("host-secret.txt"));
        Files.createSymbolicLink(src.resolve("to-dir"), secrets);
        Files.createSymbolicLink(src.resolve("to-real"), src.resolve("real.txt"));
        Files.createSymbolicLink(src.resolve("dangling"), src.resolve("none"));

        ImportSource source = ImportSource.ofHostPath(src.toRealPath());
        files.importTree(source, "work/in", false);

        assertThat(entries("work/in")).containsExactly(Map.entry("work/in/real.txt", EntryType.FILE));
        assertThat(source.sizeBytes()).isEqualTo(4);
        assertThat(contents(".")).noneMatch(c -> c.contains("host secret"));
    }

    @Test
    @EnabledIf("supportsUnixMetadata")
    void should_drop_write_bits_and_still_replace_and_delete_when_importing_read_only() throws Exception {
        Path src = Files.createDirectories(hostSources.resolve("skill/bin"));
        Files.writeString(src.resolve("tool.sh"), "echo");
        Files.setPosixFilePermissions(src.resolve("tool.sh"), PosixFilePermissions.fromString("rwxr-xr-x"));

        files.importTree(ImportSource.ofHostPath(hostSources.resolve("skill").toRealPath()), "work/skill", true);

        for (String p : List.of("work/skill", "work/skill/bin", "work/skill/bin/tool.sh")) {
            assertThat(files.stat(p).orElseThrow().mode() & 0222).as(p).isZero();
        }
        assertThat(files.stat("work/skill/bin/tool.sh").orElseThrow().mode() & 0100).isNotZero();
        files.importTree(ImportSource.ofHostPath(hostSources.resolve("skill").toRealPath()), "work/skill", true);
        files.delete("work/skill");
        assertThat(files.stat("work/skill")).isEmpty();
    }

    @Test
    void should_replace_what_was_at_the_destination_when_importing() throws Exception {
        files.write("work/in/old.txt", utf8("old"), 0644);
        createLink("work/in/old-link", OUTSIDE_DIR);

        files.importTree(hostTree("new.txt", "new"), "work/in", false);
        createLink("out/link-dest", OUTSIDE_DIR);
        files.importTree(hostTree("other.txt", "other"), "out/link-dest", false);

        assertThat(files.stat("work/in")).get().extracting(FileEntry::type).isEqualTo(EntryType.FILE);
        assertThat(files.read("work/in", 0, 10).content()).isEqualTo(utf8("new"));
        assertThat(files.stat("out/link-dest")).get().extracting(FileEntry::type).isEqualTo(EntryType.FILE);
        assertThat(files.read("out/link-dest", 0, 10).content()).isEqualTo(utf8("other"));
        assertThat(outsideIntact()).isTrue();
    }

    @Test
    void should_leave_nothing_and_keep_the_old_destination_when_an_import_fails() {
        files.write("work/in/old.txt", utf8("old"), 0644);
        ImportSource failing = failingSource(v -> {
            v.directory(dir("."));
            v.file(file("half.txt", 4), new ByteArrayInputStream(utf8("half")));
        });

        Throwable t = catchThrowable(() -> files.importTree(failing, "work/in", false));

        assertThat(t).isInstanceOf(CodeExecException.class);
        assertThat(files.read("work/in/old.txt", 0, 10).content()).isEqualTo(utf8("old"));
        assertThat(entries("work/in")).containsOnlyKeys("work/in/old.txt");
        assertNoTemporaryNames();
    }

    @Test
    void should_refuse_root_destination_and_unsafe_entry_names_when_importing() {
        assertThatThrownBy(() -> files.importTree(hostTree("x.txt", "x"), ".", false))
                .isInstanceOf(InvalidSpecException.class);
        for (String bad : List.of("../evil.txt", "/evil.txt", "a/../../evil.txt")) {
            ImportSource unsafe = source(v -> {
                v.directory(dir("."));
                v.file(file(bad, 4), new ByteArrayInputStream(utf8("evil")));
            });

            assertThatThrownBy(() -> files.importTree(unsafe, "work/in/deep", false)).as(bad)
                    .isInstanceOf(PathEscapeException.class);
        }

        assertThat(contents(".")).noneMatch(c -> c.equals("evil"));
        assertThat(entries("work")).doesNotContainKeys("work/in/deep", "work/evil.txt", "work/in/evil.txt");
        assertNoTemporaryNames();
    }

    @Test
    void should_import_a_workspace_tree_leaving_its_links_out() throws Exception {
        files.write("work/src/a.txt", utf8("A"), 0755);
        files.write("work/src/sub/b.txt", utf8("BB"), 0644);
        createLink("work/src/file-out", OUTSIDE_FILE);
        createLink("work/src/dir-out", OUTSIDE_DIR);
        createLink("work/src/keep-link", "work/keep.txt");

        ImportSource tree = ImportSource.ofWorkspace(files, "work/src");
        files.importTree(tree, "out/copy", false);
        files.importTree(ImportSource.ofWorkspace(files, "work/src/a.txt"), "out/a-copy.txt", false);

        assertThat(tree.sizeBytes()).isEqualTo(3);
        assertThat(tree.hostPath()).isEmpty();
        assertThat(entries("out")).containsExactlyInAnyOrderEntriesOf(Map.of("out/copy", EntryType.DIRECTORY,
                "out/copy/a.txt", EntryType.FILE, "out/copy/sub", EntryType.DIRECTORY,
                "out/copy/sub/b.txt", EntryType.FILE, "out/a-copy.txt", EntryType.FILE));
        assertThat(files.read("out/copy/sub/b.txt", 0, 10).content()).isEqualTo(utf8("BB"));
        if (supportsUnixMetadata()) {
            assertThat(Integer.toOctalString(files.stat("out/a-copy.txt").orElseThrow().mode())).isEqualTo("755");
        }
        assertThat(outsideIntact()).isTrue();
    }

    // ---------------------------------------------------------------- errors are typed

    @Test
    void should_refuse_absolute_and_dot_dot_paths_in_every_operation() {
        for (String bad : List.of("../x", "/etc/passwd", "work/../../x")) {
            List<ThrowingCallable> ops = List.of(
                    () -> files.resolve(bad),
                    () -> files.stat(bad),
                    () -> files.walk(bad, e -> WalkAction.CONTINUE),
                    () -> files.read(bad, 0, 10),
                    () -> files.write(bad, utf8("x"), 0644),
                    () -> files.mkdirs(bad),
                    () -> files.delete(bad),
                    () -> files.importTree(hostTree("x.txt", "x"), bad, false),
                    () -> files.export(List.of(bad), (p, s, in) -> true));
            for (int i = 0; i < ops.size(); i++) {
                assertThatThrownBy(ops.get(i)).as(bad + " #" + i).isInstanceOf(PathEscapeException.class);
            }
        }
    }

    @Test
    void should_name_no_backend_location_in_error_messages() throws Exception {
        createLinks();
        List<ThrowingCallable> failing = List.of(
                () -> files.read("out/file-out", 0, 10),
                () -> files.read("out/dangling", 0, 10),
                () -> files.read("work/none", 0, 10),
                () -> files.read("work", 0, 10),
                () -> files.write("out/dir-out/x", utf8("x"), 0644),
                () -> files.write("work", utf8("x"), 0644),
                () -> files.mkdirs("work/keep.txt/x"),
                () -> files.export(List.of("work/none"), (p, s, in) -> true),
                () -> files.importTree(failingSource(v -> v.directory(dir("."))), "work/in", false));

        for (ThrowingCallable op : failing) {
            Throwable t = catchThrowable(op);
            assertThat(t).isInstanceOf(CodeExecException.class);
            assertThat(t.getMessage()).doesNotContain(location());
        }
    }

    @Test
    void should_throw_workspace_gone_when_the_workspace_was_removed() throws Exception {
        removeWorkspace();

        for (Consumer<WorkspaceFiles> op : List.<Consumer<WorkspaceFiles>>of(
                f -> f.stat("work/keep.txt"),
                f -> f.read("work/keep.txt", 0, 10),
                f -> f.write("work/new.txt", utf8("x"), 0644),
                f -> f.walk(".", e -> WalkAction.CONTINUE))) {
            assertThatThrownBy(() -> op.accept(files())).isInstanceOf(WorkspaceGoneException.class);
        }
    }

    // ---------------------------------------------------------------- helpers

    protected static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Links inside the workspace ({@code out/in}, {@code out/workdir}), leading out, and dangling. */
    private void createLinks() throws Exception {
        createLink("out/in", "work/keep.txt");
        createLink("out/workdir", "work");
        createLink("out/file-out", OUTSIDE_FILE);
        createLink("out/dir-out", OUTSIDE_DIR);
        createLink("out/dangling", MISSING);
    }

    /** Every entry below {@code dir}, with its type. */
    protected Map<String, EntryType> entries(String dir) {
        Map<String, EntryType> out = new LinkedHashMap<>();
        files.walk(dir, e -> {
            out.put(e.path(), e.type());
            return WalkAction.CONTINUE;
        });
        return out;
    }

    /** No temporary name of a write or an import is left anywhere in the workspace. */
    protected void assertNoTemporaryNames() {
        assertThat(entries(".").keySet()).noneMatch(p -> {
            String name = p.substring(p.lastIndexOf('/') + 1);
            return name.startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX)
                    || name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX);
        });
    }

    /** The contents of every regular file below {@code dir}. */
    private List<String> contents(String dir) {
        List<String> paths = new ArrayList<>();
        files.walk(dir, e -> {
            if (e.isFile()) {
                paths.add(e.path());
            }
            return WalkAction.CONTINUE;
        });
        List<String> out = new ArrayList<>();
        files.export(paths, (p, s, in) -> out.add(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        return out;
    }

    /** A one-file host source. */
    private ImportSource hostTree(String name, String content) throws IOException {
        Path f = hostSources.resolve(name);
        Files.writeString(f, content);
        return ImportSource.ofHostPath(f.toRealPath());
    }

    private static FileEntry dir(String path) {
        return new FileEntry(path, EntryType.DIRECTORY, 0, 0755, Instant.now());
    }

    private static FileEntry file(String path, long size) {
        return new FileEntry(path, EntryType.FILE, size, 0644, Instant.now());
    }

    private interface Entries {
        void emit(ImportSource.Visitor v) throws IOException;
    }

    /** A source that yields what {@code entries} emits. */
    private static ImportSource source(Entries entries) {
        return new ImportSource() {
            @Override
            public Optional<Path> hostPath() {
                return Optional.empty();
            }

            @Override
            public long sizeBytes() {
                return 0;
            }

            @Override
            public void forEach(Visitor visitor) throws IOException {
                entries.emit(visitor);
            }
        };
    }

    /** A source that yields what {@code entries} emits, then fails as a source being read can. */
    private static ImportSource failingSource(Entries entries) {
        return source(v -> {
            entries.emit(v);
            throw new IOException("the source broke off");
        });
    }

}
