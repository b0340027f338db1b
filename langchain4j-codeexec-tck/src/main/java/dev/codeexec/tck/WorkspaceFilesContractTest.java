package dev.codeexec.tck;

import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The contract of {@link WorkspaceFiles}: what every provider of the file primitives obeys, whatever carries the bytes
 * (host calls, a tar archive, HTTP). A provider's test class extends this, the last class of the chain
 * {@link WorkspaceFilesFixture} (hooks, set-up, helpers) &larr; {@link WorkspaceFilesReadWriteContract} (reads, writes,
 * links, stat, walk) &larr; this class (directories, delete, export, import, refused paths, typed errors). It creates a
 * fresh workspace per test and implements the few fixtures the primitives cannot make themselves: symbolic links
 * (including ones leading outside), a check that the things outside are untouched, and removing the workspace.
 *
 * <p>Sources of imports are host trees: the test builds them in {@link #hostSources}, on the machine running the test.
 * Capability-dependent tests switch on {@link #supportsUnixMetadata()} and {@link #supportsSpecialFiles()}.
 */
public abstract class WorkspaceFilesContractTest extends WorkspaceFilesReadWriteContract {

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
}
