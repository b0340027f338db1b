package dev.codeexec.tck;

import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture of the {@link WorkspaceFiles} contract: the hooks a provider implements (a fresh workspace per test,
 * links, the things outside it, removing it), the standard layout made before each test ({@code work/keep.txt},
 * {@code out/}) and the helpers the contract's tests share. It checks nothing itself; the tests live in
 * {@link WorkspaceFilesReadWriteContract} and {@link WorkspaceFilesContractTest}, and a provider's test class extends
 * {@link WorkspaceFilesContractTest}, the last class of the chain.
 *
 * <p>Sources of imports are host trees: the test builds them in {@link #hostSources}, on the machine running the test.
 * Capability-dependent tests switch on {@link #supportsUnixMetadata()} and {@link #supportsSpecialFiles()}.
 */
public abstract class WorkspaceFilesFixture {

    /** {@link #createLink} target: a regular file outside the workspace holding {@link #SECRET}. */
    protected static final String OUTSIDE_FILE = "<outside file>";

    /** {@link #createLink} target: a directory outside the workspace holding {@code secret.txt} ({@link #SECRET}). */
    protected static final String OUTSIDE_DIR = "<outside directory>";

    /** {@link #createLink} target: nothing (a dangling link). */
    protected static final String MISSING = "<missing>";

    /** What the files outside the workspace hold. */
    protected static final String SECRET = "secret";

    /**
     * For a workspace reached only by commands (a container, a pod): {@code sh -c CREATE_OUTSIDE sh <outside>}
     * creates, in the absolute directory {@code <outside>}, the file and directory that {@link #OUTSIDE_FILE} and
     * {@link #OUTSIDE_DIR} name.
     */
    protected static final String CREATE_OUTSIDE = "mkdir -p \"$1/dir\" && printf " + SECRET + " >\"$1/file\" && printf "
            + SECRET + " >\"$1/dir/secret.txt\"";

    /** {@code sh -c SHOW_OUTSIDE sh <outside>} prints {@link #outsideAsCreated} while the outside is untouched. */
    protected static final String SHOW_OUTSIDE =
            "cat \"$1/file\"; echo; cat \"$1/dir/secret.txt\"; echo; ls -A \"$1\" \"$1/dir\"";

    /** {@code sh -c PLANT_LINK sh <target> <link>} makes the parents of {@code <link>}, then the link. */
    protected static final String PLANT_LINK = "mkdir -p \"$(dirname \"$2\")\" && ln -sfn \"$1\" \"$2\"";

    /** Host trees to import from, on the machine running the test. */
    @TempDir
    protected Path hostSources;

    /** The primitives of this test's workspace, obtained once before each test. */
    WorkspaceFiles files;

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

    // ---------------------------------------------------------------- helpers

    /** What {@link #SHOW_OUTSIDE} prints for the outside {@link #CREATE_OUTSIDE} made at {@code outside}. */
    protected static String outsideAsCreated(String outside) {
        return SECRET + "\n" + SECRET + "\n" + outside + ":\ndir\nfile\n\n" + outside + "/dir:\nsecret.txt\n";
    }

    /**
     * The absolute path a {@link #createLink} target names, for a workspace at {@code root} and the outside at
     * {@code outside} (as {@link #CREATE_OUTSIDE} made it).
     */
    protected static String linkTarget(String target, String root, String outside) {
        return switch (target) {
            case OUTSIDE_FILE -> outside + "/file";
            case OUTSIDE_DIR -> outside + "/dir";
            case MISSING -> root + "/no/such/thing";
            default -> root + "/" + target;
        };
    }

    protected static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Links inside the workspace ({@code out/in}, {@code out/workdir}), leading out, and dangling. */
    void createLinks() throws Exception {
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
    List<String> contents(String dir) {
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
    ImportSource hostTree(String name, String content) throws IOException {
        Path f = hostSources.resolve(name);
        Files.writeString(f, content);
        return ImportSource.ofHostPath(f.toRealPath());
    }

    static FileEntry dir(String path) {
        return new FileEntry(path, EntryType.DIRECTORY, 0, 0755, Instant.now());
    }

    static FileEntry file(String path, long size) {
        return new FileEntry(path, EntryType.FILE, size, 0644, Instant.now());
    }

    interface Entries {
        void emit(ImportSource.Visitor v) throws IOException;
    }

    /** A source that yields what {@code entries} emits. */
    static ImportSource source(Entries entries) {
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
    static ImportSource failingSource(Entries entries) {
        return source(v -> {
            entries.emit(v);
            throw new IOException("the source broke off");
        });
    }

}
