package dev.codeexec.workspace.spi;

import static dev.codeexec.testing.TarArchives.archive;
import static dev.codeexec.testing.TarArchives.describing;
import static dev.codeexec.testing.TarArchives.dir;
import static dev.codeexec.testing.TarArchives.entries;
import static dev.codeexec.testing.TarArchives.entry;
import static dev.codeexec.testing.TarArchives.file;
import static dev.codeexec.testing.TarArchives.link;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.Test;

/**
 * The tar checks shared by the remote backends: what a hostile or broken remote side sends back (absolute names,
 * {@code ..}, entries outside the requested tree, links and devices posing as files) is refused or typed for what it
 * is, each next to the well-formed archive that passes; and the names, owner and headers of what is
 * written towards a workspace.
 */
class CheckedTarTest {

    private static final Instant T = Instant.parse("2026-01-02T03:04:05Z");

    // ------------------------------------------------------------------ reading a tree

    @Test
    void should_pass_entries_relative_to_the_requested_tree_when_the_archive_is_well_formed() throws IOException {
        byte[] tar = archive(dir("data/"), file("data/a.txt", "alpha"), dir("data/sub/"), file("data/sub/b.txt", "beta"));

        assertThat(read(tar)).containsExactly(". DIRECTORY", "a.txt FILE alpha", "sub DIRECTORY",
                "sub/b.txt FILE beta");
    }

    @Test
    void should_refuse_the_archive_when_an_entry_has_an_absolute_name() {
        byte[] tar = archive(file("/etc/passwd", "root:x:0:0"));
        List<String> seen = new ArrayList<>();

        assertThatThrownBy(() -> CheckedTar.read(new ByteArrayInputStream(tar), "the pod", describing(seen)))
                .isInstanceOf(PathEscapeException.class).hasMessage("the pod sent an archive entry with an absolute name");
        assertThat(seen).isEmpty();
    }

    @Test
    void should_refuse_the_archive_when_an_entry_climbs_out_with_dot_dot() {
        byte[] tar = archive(dir("data/"), file("data/../../etc/passwd", "root:x:0:0"));
        List<String> seen = new ArrayList<>();

        assertThatThrownBy(() -> CheckedTar.read(new ByteArrayInputStream(tar), "the pod", describing(seen)))
                .isInstanceOf(PathEscapeException.class).hasMessageContaining("'..'");
        assertThat(seen).containsExactly(". DIRECTORY");
    }

    @Test
    void should_refuse_the_archive_when_an_entry_is_outside_the_requested_tree() {
        byte[] tar = archive(dir("data/"), file("data/a.txt", "alpha"), file("other/secret", "s3cret"));
        List<String> seen = new ArrayList<>();

        assertThatThrownBy(() -> CheckedTar.read(new ByteArrayInputStream(tar), "the pod", describing(seen)))
                .isInstanceOf(PathEscapeException.class).hasMessageContaining("outside the requested tree");
        assertThat(seen).containsExactly(". DIRECTORY", "a.txt FILE alpha");
    }

    @Test
    void should_stop_reading_when_the_visitor_says_so() throws IOException {
        byte[] tar = archive(dir("data/"), file("data/a.txt", "alpha"), file("data/b.txt", "beta"));
        List<String> seen = new ArrayList<>();

        CheckedTar.read(new ByteArrayInputStream(tar), "the pod", (e, in) -> {
            seen.add(e.rel());
            return !e.rel().equals("a.txt");
        });

        assertThat(seen).containsExactly(".", "a.txt");
    }

    @Test
    void should_report_a_link_with_its_target_and_no_content_when_the_archive_holds_one() throws IOException {
        byte[] tar = archive(dir("data/"), link("data/out", "/etc/shadow"));
        List<CheckedTar.Entry> seen = new ArrayList<>();

        CheckedTar.read(new ByteArrayInputStream(tar), "the pod", (e, in) -> seen.add(e));

        assertThat(seen.get(1)).extracting(CheckedTar.Entry::rel, CheckedTar.Entry::type, CheckedTar.Entry::size,
                CheckedTar.Entry::linkTarget).containsExactly("out", EntryType.LINK, 0L, "/etc/shadow");
        assertThat(seen.get(0).linkTarget()).isNull();
    }

    @Test
    void should_not_close_the_callers_stream_when_reading() throws IOException {
        boolean[] closed = {false};
        InputStream in = new ByteArrayInputStream(archive(file("a.txt", "alpha"))) {
            @Override
            public void close() {
                closed[0] = true;
            }
        };

        CheckedTar.read(in, "the pod", (e, content) -> true);

        assertThat(closed[0]).isFalse();
    }

    // ------------------------------------------------------------------ exporting one file

    @Test
    void should_lend_the_file_to_the_visitor_and_keep_the_archive_open_when_exporting() throws IOException {
        boolean[] closed = {false};
        InputStream in = new ByteArrayInputStream(archive(file("a.txt", "alpha"))) {
            @Override
            public void close() {
                closed[0] = true;
            }
        };
        List<String> got = new ArrayList<>();
        CheckedTar.FileExport export = new CheckedTar.FileExport("work/a.txt", (path, size, content) -> {
            got.add(path + " " + size + " " + new String(content.readAllBytes(), StandardCharsets.UTF_8));
            content.close();
            return false;
        });

        CheckedTar.read(in, "the pod", export);

        assertThat(got).containsExactly("work/a.txt 5 alpha");
        assertThat(export.seen()).isTrue();
        assertThat(export.goOn()).isFalse();
        assertThat(closed[0]).isFalse();
    }

    @Test
    void should_refuse_an_export_when_the_archive_holds_a_link_or_a_directory() {
        for (byte[] tar : List.of(archive(link("a.txt", "/etc/shadow")), archive(dir("a.txt/")),
                archive(dir("a.txt/"), file("a.txt/b", "y")))) {
            CheckedTar.FileExport export = new CheckedTar.FileExport("a.txt", (path, size, content) -> true);

            assertThatThrownBy(() -> CheckedTar.read(new ByteArrayInputStream(tar), "the pod", export))
                    .isInstanceOf(InvalidSpecException.class).hasMessage("'a.txt' is not a regular file");
            assertThat(export.seen()).isFalse();
        }
    }

    @Test
    void should_type_a_visitors_read_failure_when_exporting() {
        CheckedTar.FileExport export = new CheckedTar.FileExport("a.txt", (path, size, content) -> {
            throw new IOException("disk full");
        });

        assertThatThrownBy(() -> CheckedTar.read(new ByteArrayInputStream(archive(file("a.txt", "x"))), "the pod",
                export)).isInstanceOf(InvalidSpecException.class).hasMessage("'a.txt' could not be read");
    }

    // ------------------------------------------------------------------ entry types

    @Test
    void should_type_plain_files_and_directories_as_such() {
        assertThat(CheckedTar.typeOf(entry("f", TarConstants.LF_NORMAL))).isEqualTo(EntryType.FILE);
        assertThat(CheckedTar.typeOf(entry("d/", TarConstants.LF_DIR))).isEqualTo(EntryType.DIRECTORY);
    }

    @Test
    void should_type_links_and_devices_as_not_a_file_when_they_pose_under_a_file_name() {
        TarArchiveEntry symlink = entry("report.txt", TarConstants.LF_SYMLINK);
        symlink.setLinkName("/etc/shadow");
        TarArchiveEntry hardLink = entry("report.txt", TarConstants.LF_LINK);
        hardLink.setLinkName("etc/shadow");

        assertThat(CheckedTar.typeOf(symlink)).isEqualTo(EntryType.LINK);
        assertThat(CheckedTar.typeOf(hardLink)).isEqualTo(EntryType.OTHER);
        assertThat(CheckedTar.typeOf(entry("report.txt", TarConstants.LF_FIFO))).isEqualTo(EntryType.OTHER);
        assertThat(CheckedTar.typeOf(entry("report.txt", TarConstants.LF_CHR))).isEqualTo(EntryType.OTHER);
        assertThat(CheckedTar.typeOf(entry("report.txt", TarConstants.LF_BLK))).isEqualTo(EntryType.OTHER);
    }

    // ------------------------------------------------------------------ writing towards a workspace

    @Test
    void should_name_import_entries_under_the_stage_when_they_stay_in_their_tree() {
        assertThat(CheckedTar.stageName(".stage", ".")).isEqualTo(".stage");
        assertThat(CheckedTar.stageName(".stage", "a/b.txt")).isEqualTo(".stage/a/b.txt");
        assertThat(CheckedTar.stageName(".stage", "a..b/c.")).isEqualTo(".stage/a..b/c.");
    }

    @Test
    void should_refuse_import_entries_with_absolute_names() {
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "/etc/cron.d/x"))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "a\\..\\..\\x"))
                .isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_refuse_import_entries_that_leave_their_tree() {
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "a/../../x")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "..")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "a//b")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "a/./b")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> CheckedTar.stageName(".stage", "a/")).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_write_entries_owned_by_the_workspace_user_with_their_modes() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CheckedTar.Writer tar = new CheckedTar.Writer(out, 1234, 5678)) {
            tar.directory("d", 0755, T);
            tar.file("d/f.txt", "hello".getBytes(StandardCharsets.UTF_8), 0170644, T);
        }

        assertThat(entries(out.toByteArray())).containsExactly("d/ 1234:5678 40755 0", "d/f.txt 1234:5678 100644 5");
    }

    @Test
    void should_write_long_names_and_big_ids_as_posix_headers() throws IOException {
        String longName = "d/" + "n".repeat(300);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CheckedTar.Writer tar = new CheckedTar.Writer(out, 4_000_000_000L, 3_000_000L)) {
            tar.file(longName, new byte[] {1}, 0600, T);
        }

        assertThat(entries(out.toByteArray())).containsExactly(longName + " 4000000000:3000000 100600 1");
    }

    @Test
    void should_copy_exactly_the_declared_size_when_a_source_file_changed_while_copied() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (CheckedTar.Writer tar = new CheckedTar.Writer(out, 1, 1)) {
            tar.file("grew", 3, new ByteArrayInputStream("abcdef".getBytes(StandardCharsets.UTF_8)), 0644, T);
            tar.file("shrank", 4, new ByteArrayInputStream("ab".getBytes(StandardCharsets.UTF_8)), 0644, T);
        }

        List<String> seen = new ArrayList<>();
        try (TarArchiveInputStream in = new TarArchiveInputStream(new ByteArrayInputStream(out.toByteArray()))) {
            TarArchiveEntry e;
            while ((e = in.getNextEntry()) != null) {
                seen.add(e.getName() + "=" + new String(in.readAllBytes(), StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(seen).containsExactly("grew=abc", "shrank=ab\0\0");
    }

    @Test
    void should_refuse_to_write_names_that_leave_the_tree() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CheckedTar.Writer tar = new CheckedTar.Writer(out, 1, 1);

        assertThatThrownBy(() -> tar.directory("/etc", 0755, T)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> tar.file("a/../../x", new byte[0], 0644, T)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> tar.file("", new byte[0], 0644, T)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> tar.file("./x", new byte[0], 0644, T)).isInstanceOf(PathEscapeException.class);
    }

    // ------------------------------------------------------------------ helpers

    private static List<String> read(byte[] tar) throws IOException {
        List<String> seen = new ArrayList<>();
        CheckedTar.read(new ByteArrayInputStream(tar), "the pod", describing(seen));
        return seen;
    }
}
