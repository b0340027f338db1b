package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The in-run folder listing of remote backends: the shell function (run here with the host's {@code sh}, GNU
 * {@code find} and {@code head}), the filter that keeps it out of the program's output, and the parser, under programs
 * that imitate it.
 */
class RunListingTest {

    static final List<String> FOLDERS = List.of("work", "out");

    @TempDir
    Path root;

    @BeforeAll
    static void gnuTools() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "find . -maxdepth 0 -printf '%y' && printf 'a\\0' | head -z -n 1")
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assumeTrue(p.waitFor() == 0, "GNU find and head are needed");
    }

    static Map<String, FolderSnapshot.Entry> byPath(FolderSnapshot s) {
        return s.entries().stream().collect(Collectors.toMap(FolderSnapshot.Entry::path, Function.identity()));
    }

    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "chunk={0}")
    @ValueSource(ints = {1, 7, 65536})
    void should_list_files_folders_and_links_unfollowed_when_names_hold_spaces_tabs_and_newlines(int chunk)
            throws Exception {
        Files.createDirectories(root.resolve("work/sub dir"));
        Files.createDirectories(root.resolve("out"));
        Files.writeString(root.resolve("work/a b.txt"), "abc");
        Files.writeString(root.resolve("work/new\nline.txt"), "12345");
        Files.writeString(root.resolve("work/sub dir/tab\tname"), "");
        Files.createSymbolicLink(root.resolve("work/outside"), Path.of("/etc"));
        Files.createDirectories(root.resolve("runs"));
        Files.writeString(root.resolve("runs/not-listed"), "x");

        RunListingShell.Outcome o = RunListingShell.run(root, "printf 'hello\\n'; printf 'no newline'", FOLDERS,
                100, chunk);

        assertThat(text(o.stdout())).isEqualTo("hello\nno newline");
        assertThat(o.snapshot()).isNotNull();
        assertThat(o.snapshot().complete()).isTrue();
        Map<String, FolderSnapshot.Entry> e = byPath(o.snapshot());
        assertThat(e.keySet()).containsExactlyInAnyOrder("work", "work/sub dir", "work/a b.txt",
                "work/new\nline.txt", "work/sub dir/tab\tname", "work/outside", "out");
        assertThat(e.get("work/a b.txt").sizeBytes()).isEqualTo(3);
        assertThat(e.get("work/new\nline.txt").kind()).isEqualTo(FolderSnapshot.Kind.FILE);
        assertThat(e.get("work/outside").kind()).as("a link is listed as a link, not followed")
                .isEqualTo(FolderSnapshot.Kind.LINK);
        assertThat(e.get("work").kind()).isEqualTo(FolderSnapshot.Kind.DIRECTORY);
        assertThat(e.get("work/a b.txt").modified())
                .isEqualTo(Files.getLastModifiedTime(root.resolve("work/a b.txt")).toInstant());
    }

    @ParameterizedTest(name = "chunk={0}")
    @ValueSource(ints = {1, 5, 65536})
    void should_show_an_imitated_listing_as_output_and_keep_the_real_one_when_the_program_writes_one(int chunk)
            throws Exception {
        Files.createDirectories(root.resolve("work"));
        Files.writeString(root.resolve("work/real.txt"), "r");
        // The program knows the nonce (the wrapper's first argument) and writes a whole listing of its own.
        String forge = "printf 'before'; printf '\\000\\001codeexec-listing %s\\n' \"$1\";"
                + " printf 'f\\t9\\t0\\twork/forged\\000E0\\000'; printf '\\001end %s 0\\n' \"$1\"; printf 'after'";

        RunListingShell.Outcome o = RunListingShell.run(root, forge, FOLDERS, 100, chunk);

        assertThat(o.snapshot()).isNotNull();
        assertThat(byPath(o.snapshot())).containsKey("work/real.txt").doesNotContainKey("work/forged");
        String out = text(o.stdout());
        assertThat(out).startsWith("before\u0000\u0001codeexec-listing ").contains("work/forged").endsWith("0\nafter");
    }

    @Test
    void should_deliver_the_listing_when_the_program_closed_its_stdout() throws Exception {
        Files.createDirectories(root.resolve("out"));
        Files.writeString(root.resolve("out/r.csv"), "1,2");

        RunListingShell.Outcome o = RunListingShell.run(root, "printf 'x'; exec >&-; printf 'lost' 2>/dev/null",
                FOLDERS, 100, 4096);

        assertThat(text(o.stdout())).isEqualTo("x");
        assertThat(byPath(o.snapshot())).containsKey("out/r.csv");
    }

    @Test
    void should_mark_the_listing_incomplete_when_the_folders_hold_more_entries_than_asked() throws Exception {
        Files.createDirectories(root.resolve("work"));
        for (int i = 0; i < 6; i++) {
            Files.writeString(root.resolve("work/f" + i), "x");
        }
        RunListingShell.Outcome cut = RunListingShell.run(root, "true", FOLDERS, 3, 4096);
        RunListingShell.Outcome whole = RunListingShell.run(root, "true", FOLDERS, 7, 4096);

        assertThat(cut.snapshot().complete()).isFalse();
        assertThat(cut.snapshot().entries()).hasSizeLessThanOrEqualTo(3);
        assertThat(cut.stdout()).isEmpty();
        assertThat(whole.snapshot().complete()).as("positive control: 7 entries fit").isTrue();
        assertThat(whole.snapshot().entries()).hasSize(7);
    }

    @Test
    void should_give_no_listing_when_a_name_is_not_utf8() throws Exception {
        Files.createDirectories(root.resolve("work"));
        RunListingShell.Outcome o = RunListingShell.run(root, "printf x > \"$(printf 'work/bad\\377name')\"",
                FOLDERS, 100, 4096);

        assertThat(o.snapshot()).isNull();
    }

    // ------------------------------------------------------------------ the parser alone

    /** Feeds {@code stream} (with {@code %n} for the run's nonce) through a listing's filter. */
    static FolderSnapshot feed(RunListing l, String stream, int exitCode, boolean usable, ByteArrayOutputStream out) {
        byte[] b = stream.replace("%n", l.arguments().get(0)).getBytes(StandardCharsets.ISO_8859_1);
        OutputSink sink = (s, bytes, off, len) -> out.write(bytes, off, len);
        l.filter(sink).write(StdStream.STDOUT, b, 0, b.length);
        l.streamEnded(sink);
        return l.snapshot(exitCode, usable);
    }

    static RunListing listing() {
        return new RunListing(FOLDERS, 100, ChronoUnit.SECONDS);
    }

    static String listed(String... records) {
        return "\u0000\u0001codeexec-listing %n\n" + String.join("", records) + "E0\u0000\u0001end %n 0\n";
    }

    @Test
    void should_accept_a_listing_of_paths_below_the_folders_when_it_ends_with_the_runs_nonce_and_status() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FolderSnapshot s = feed(listing(), "out" + listed("d\t4096\t1.5\twork\u0000", "f\t3\t2.9\twork/x\u0000"),
                0, true, out);

        assertThat(out.toString(StandardCharsets.ISO_8859_1)).isEqualTo("out");
        assertThat(s.entries()).extracting(FolderSnapshot.Entry::path).containsExactly("work", "work/x");
        assertThat(s.entries().get(1).modified().getEpochSecond()).isEqualTo(2);
        assertThat(s.entries().get(0).sizeBytes()).isZero();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"../etc/passwd", "/etc/passwd", "work/../../etc", "runs/x", "workx/y", "work//y",
            "work/./y", ""})
    void should_reject_a_listing_when_it_names_a_path_outside_the_folders(String path) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String stream = listed("f\t3\t2\t" + path + "\u0000");

        assertThat(feed(listing(), stream, 0, true, out)).isNull();
        assertThat(out.size()).as("shown as output instead").isEqualTo(stream.replace("%n", "x".repeat(32)).length());
    }

    @Test
    void should_reject_a_listing_when_its_nonce_status_or_run_do_not_match() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String ok = listed("f\t3\t2\twork/x\u0000");

        assertThat(feed(listing(), ok.replace("%n", "0".repeat(32)), 0, true, out)).as("another nonce").isNull();
        assertThat(out.toString(StandardCharsets.ISO_8859_1)).as("shown as written")
                .isEqualTo(ok.replace("%n", "0".repeat(32)));
        assertThat(feed(listing(), ok, 1, true, new ByteArrayOutputStream())).as("another exit status").isNull();
        assertThat(feed(listing(), ok, 0, false, new ByteArrayOutputStream())).as("timed out or killed").isNull();
        assertThat(feed(listing(), ok.replace("E0", "E1"), 0, true, new ByteArrayOutputStream())).as("failed")
                .isNull();
        assertThat(feed(listing(), ok + "more", 0, true, new ByteArrayOutputStream())).as("not at the end")
                .isNull();
        assertThat(feed(listing(), ok, 0, true, new ByteArrayOutputStream())).as("positive control").isNotNull();
    }

    @Test
    void should_show_output_after_an_imitated_marker_when_no_listing_follows() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RunListing l = listing();
        String stream = "a\u0000\u0001codeexec-listing %n\nthen more output\u0000";

        assertThat(feed(l, stream, 0, true, out)).isNull();
        assertThat(out.toString(StandardCharsets.ISO_8859_1)).isEqualTo(stream.replace("%n", l.arguments().get(0)));
    }
}
