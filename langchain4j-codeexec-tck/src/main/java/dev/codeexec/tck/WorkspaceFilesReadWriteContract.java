package dev.codeexec.tck;

import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The {@link WorkspaceFiles} contract, first part: writes (single, batch, atomic, refused), reads and their windows,
 * stat, walk and resolve (links are reported, never followed), and links out of the workspace never read or written
 * through. Providers do not extend this class directly: they extend {@link WorkspaceFilesContractTest}, the last class
 * of the chain, which adds the rest of the contract.
 */
public abstract class WorkspaceFilesReadWriteContract extends WorkspaceFilesFixture {

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
}
