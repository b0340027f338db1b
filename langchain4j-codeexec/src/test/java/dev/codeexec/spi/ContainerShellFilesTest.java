package dev.codeexec.spi;

import static dev.codeexec.testing.TarArchives.entries;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.RemoteEntry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The write rule shared by the container and Kubernetes backends ({@link ContainerShellFiles}), against a recording
 * container: what is extracted where, under which name and owner, which commands follow, and what is cleaned up when
 * a step fails (and what is not: a workspace that is gone, a clean-up that fails itself).
 */
class ContainerShellFilesTest {

    private static final String ROOT = "/ws";
    private static final Instant T = Instant.parse("2026-01-02T03:04:05Z");

    private final Recorder files = new Recorder();

    // ------------------------------------------------------------------ writes

    @Test
    void should_extract_under_a_temporary_name_then_rename_when_writing() {
        files.write("sub/a.txt", utf8("hello"), 0640);

        assertThat(files.log).hasSize(2);
        assertThat(files.log.get(0)).matches("extract sub \\[\\.put-[0-9a-f-]{36} 1000:2000 100640 5]");
        assertThat(files.log.get(1)).isEqualTo("write 'sub/a.txt': " + List.of("mv", "-f", "-T", "--",
                tempOf(files.log.get(0)), ROOT + "/sub/a.txt"));
    }

    @Test
    void should_refuse_a_write_and_send_nothing_when_a_directory_stands_at_the_target() {
        files.stats.put("sub/d", RemoteEntry.of(EntryType.DIRECTORY, 0, 0755, T));

        assertThatThrownBy(() -> files.write("sub/d", utf8("x"), 0644)).isInstanceOf(InvalidSpecException.class)
                .hasMessage("'sub/d' is a directory");
        assertThat(files.log).isEmpty();

        files.write("sub/f", utf8("x"), 0644); // the positive control: a free name is written
        assertThat(files.log).hasSize(2);
    }

    @Test
    void should_remove_the_temporary_name_when_the_rename_fails() {
        files.failing = argv -> argv.get(0).equals("mv") ? new CodeExecException("could not rename") : null;

        assertThatThrownBy(() -> files.write("sub/a.txt", utf8("x"), 0644)).hasMessage("could not rename");

        assertThat(files.log).hasSize(3);
        assertThat(files.log.get(2)).isEqualTo("remove a temporary file: "
                + List.of("rm", "-f", "--", tempOf(files.log.get(0))));
    }

    @Test
    void should_remove_the_temporary_name_when_the_extract_fails() {
        files.extractFailure = new CodeExecException("could not extract");

        assertThatThrownBy(() -> files.write("sub/a.txt", utf8("x"), 0644)).hasMessage("could not extract");

        assertThat(files.log).hasSize(2);
        assertThat(files.log.get(1)).startsWith("remove a temporary file: [rm, -f, --, " + ROOT + "/sub/.put-");
    }

    @Test
    void should_keep_the_first_failure_when_the_clean_up_fails_too() {
        files.failing = argv -> new CodeExecException("failed: " + argv.get(0));

        assertThatThrownBy(() -> files.write("sub/a.txt", utf8("x"), 0644)).hasMessage("failed: mv")
                .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage)
                        .containsExactly("failed: rm"));
    }

    @Test
    void should_not_clean_up_when_the_workspace_is_gone() {
        files.failing = argv -> new WorkspaceGoneException("gone");

        assertThatThrownBy(() -> files.write("sub/a.txt", utf8("x"), 0644))
                .isInstanceOf(WorkspaceGoneException.class);

        assertThat(files.log).hasSize(2); // the extract and the rename, no clean-up
    }

    // ------------------------------------------------------------------ directories, deletes, imports

    @Test
    void should_extract_one_archive_of_the_missing_directories_when_making_them() {
        files.mkdirs("sub/x/y");

        assertThat(files.log).containsExactly("extract sub [x/ 1000:2000 40755 0, x/y/ 1000:2000 40755 0]");
    }

    @Test
    void should_delete_with_the_shared_script_and_the_path_as_an_argument() {
        files.stats.put("sub/$(touch x)", RemoteEntry.of(EntryType.FILE, 1, 0644, T));

        files.delete("sub/$(touch x)");

        assertThat(files.log).containsExactly("delete 'sub/$(touch x)': "
                + List.of("sh", "-c", ContainerShell.DELETE, "sh", ROOT + "/sub/$(touch x)"));
    }

    @Test
    void should_stage_then_replace_when_importing() {
        files.importTree(oneFile("data"), "sub/in", false);

        assertThat(files.log).hasSize(2);
        assertThat(files.log.get(0)).matches("extract sub \\[\\.stage-[0-9a-f-]{36}/ 1000:2000 40755 0, "
                + "\\.stage-[0-9a-f-]{36}/f\\.txt 1000:2000 100644 4]");
        String staged = ROOT + "/sub/" + files.log.get(0).substring("extract sub [".length(),
                files.log.get(0).indexOf('/'));
        assertThat(files.log.get(1)).isEqualTo("import into 'sub/in': "
                + List.of("sh", "-c", ContainerShell.REPLACE, "sh", staged, ROOT + "/sub/in"));
    }

    @Test
    void should_delete_the_stage_when_the_replace_fails() {
        files.failing = argv -> argv.get(2).equals(ContainerShell.REPLACE) ? new CodeExecException("no") : null;

        assertThatThrownBy(() -> files.importTree(oneFile("data"), "sub/in", false)).hasMessage("no");

        assertThat(files.log).hasSize(3);
        assertThat(files.log.get(2)).startsWith("remove a staged import: [sh, -c, " + ContainerShell.DELETE
                + ", sh, " + ROOT + "/sub/.stage-");
    }

    // ------------------------------------------------------------------ helpers

    private static String tempOf(String extract) {
        return ROOT + "/sub/" + extract.substring("extract sub [".length(), extract.indexOf(' ', 13));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A directory holding {@code f.txt}. */
    private static ImportSource oneFile(String content) {
        return new ImportSource() {
            @Override
            public Optional<java.nio.file.Path> hostPath() {
                return Optional.empty();
            }

            @Override
            public long sizeBytes() {
                return content.length();
            }

            @Override
            public void forEach(Visitor visitor) throws IOException {
                visitor.directory(new FileEntry(".", EntryType.DIRECTORY, 0, 0755, T));
                visitor.file(new FileEntry("f.txt", EntryType.FILE, content.length(), 0644, T),
                        new ByteArrayInputStream(utf8(content)));
            }
        };
    }

    /** A container whose {@code lstat} answers from a map and whose extracts and commands are logged. */
    private static final class Recorder extends ContainerShellFiles {

        final Map<String, RemoteEntry> stats = new HashMap<>();
        final List<String> log = new ArrayList<>();
        Function<List<String>, RuntimeException> failing = argv -> null;
        RuntimeException extractFailure;

        Recorder() {
            super(ROOT, 1000, 2000);
            stats.put(".", RemoteEntry.of(EntryType.DIRECTORY, 0, 0755, T));
            stats.put("sub", RemoteEntry.of(EntryType.DIRECTORY, 0, 0755, T));
        }

        @Override
        protected Optional<RemoteEntry> lstat(String rel) {
            return Optional.ofNullable(stats.get(rel));
        }

        @Override
        protected void extract(String dir, InputStream archive, String what) throws IOException {
            log.add("extract " + dir + " " + entries(archive.readAllBytes()));
            if (extractFailure != null) {
                throw extractFailure;
            }
        }

        @Override
        protected void command(String what, List<String> argv) {
            log.add(what + ": " + argv);
            RuntimeException e = failing.apply(argv);
            if (e != null) {
                throw e;
            }
        }

        @Override
        protected void list(String dir, ListVisitor visitor) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected FileWindow readFile(String path, long offset, int maxBytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected boolean exportFile(String path, ExportVisitor visitor) {
            throw new UnsupportedOperationException();
        }
    }
}
