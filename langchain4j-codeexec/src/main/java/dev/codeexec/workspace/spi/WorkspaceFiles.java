package dev.codeexec.workspace.spi;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/**
 * The file primitives of one workspace: what a backend implements so that
 * {@link dev.codeexec.workspace.StandardWorkspaceFS} can apply every file rule of the library on top of it (input
 * sources, output globs and limits, inline or artifact output, MIME types, access checks). An implementation moves
 * bytes and reports entries; it decides no policy. It must pass {@code dev.codeexec.tck.WorkspaceFilesContractTest}
 * of the TCK module ({@code langchain4j-codeexec-tck}).
 *
 * <p><b>Paths.</b> Every path is a workspace-relative {@code String}, normalised by the core
 * ({@link dev.codeexec.workspace.PathResolver#normalize}): {@code /} separators, no leading {@code /}, no empty,
 * {@code .} or {@code ..} segment, {@code "."} for the workspace root. The remote side is never a
 * {@code java.nio.file.Path}. An implementation still refuses an absolute path or {@code ..} with
 * {@link PathEscapeException}, whoever called it.
 *
 * <p><b>Links.</b> A symbolic link among the <em>parents</em> of a path is followed only while it stays inside the
 * workspace, checked against the real file system at the time of use; a link that leads outside or does not resolve
 * is refused with {@link PathEscapeException}. What happens to a link at the <em>last</em> component is stated per
 * operation. Nothing is ever read, written or deleted through a link that leaves the workspace.
 *
 * <p><b>Errors</b> are the library's typed exceptions, never a raw {@link IOException} or transport exception, and
 * messages name workspace-relative paths only (no host or remote paths, no raw server text):
 * <ul>
 *   <li>{@link InvalidSpecException}: the request cannot be done as asked (a missing file, a directory where a file
 *       is needed, a parent that is not a directory);</li>
 *   <li>{@link PathEscapeException}: the path leaves the workspace;</li>
 *   <li>{@link WorkspaceGoneException}: the workspace no longer exists (may also be thrown when the instance is
 *       obtained);</li>
 *   <li>{@link BackendUnavailableException}: the backend could not be reached (one translator per backend maps its
 *       transport failures);</li>
 *   <li>{@link CodeExecException}: any other failure to complete (a write or an import that failed half way, after
 *       cleaning up).</li>
 * </ul>
 *
 * <p><b>Lifetime and threads.</b> The core obtains an instance per operation (from the function given to
 * {@link dev.codeexec.workspace.StandardWorkspaceFS.Builder#files}) and drops it afterwards, so an instance should be
 * cheap; it need not be thread-safe. Calls may nest: an import can read the same workspace through its
 * {@link ImportSource} while writing into it.
 */
public interface WorkspaceFiles {

    /**
     * {@value}: the name prefix of the temporary file of an atomic {@link #write}. Listings and collection skip such
     * names, so a provider that writes through a temporary name uses this prefix (and a name no program would pick).
     */
    String WRITE_TEMP_PREFIX = ".put-";

    /**
     * {@value}: the name prefix of the temporary sibling an {@link #importTree} fills before moving it into place.
     * Listings and collection skip such names and their subtrees.
     */
    String IMPORT_TEMP_PREFIX = ".stage-";

    /**
     * The path that {@code path} names once links inside the workspace are followed, at every component including the
     * last: the canonical workspace-relative path of what a read would open. Components that do not exist are kept as
     * given (nothing below a missing component can be a link).
     *
     * @return a normalised workspace-relative path ({@code "."} for the root)
     * @throws PathEscapeException when a link on the way leads outside the workspace or does not resolve
     */
    String resolve(String path);

    /**
     * The entry at {@code path} itself: a link at the last component is reported as {@link EntryType#LINK}, not
     * followed (also when it leads outside: its existence is not a read through it). {@code "."} is the root.
     *
     * @return the entry, its {@link FileEntry#path()} being {@code path} as given; empty when nothing is there,
     *         including when a parent is a regular file
     * @throws PathEscapeException when a parent leaves the workspace
     */
    Optional<FileEntry> stat(String path);

    /**
     * Walks the tree below directory {@code dir} depth first, in pre-order (a directory before what it contains),
     * without following links: a link is reported as {@link EntryType#LINK} and never descended. {@code dir} itself is
     * found as by {@link #resolve} (the core passes resolved paths) and not reported; each entry's path is
     * {@code dir + "/" + relative path} (just the relative path when {@code dir} is {@code "."}). Order among siblings
     * is unspecified. An entry that cannot be read (an unreadable directory) is left out; a {@code dir} that is missing
     * or not a directory yields nothing.
     *
     * <p>The visitor decides for each entry: {@link WalkAction#SKIP_SUBTREE} on a directory leaves out what it
     * contains, {@link WalkAction#STOP} ends the walk at once (on a remote backend, before more is fetched).
     *
     * @throws PathEscapeException when {@code dir} leads outside the workspace
     */
    void walk(String dir, WalkVisitor visitor);

    /**
     * Reads a window of a regular file. Links inside the workspace are followed as by {@link #resolve}; the file is
     * then opened without following a link at its last component, so a link swapped in since a check is refused, not
     * read through. A window at or past the end of the file is empty.
     *
     * @param offset   the first byte to read, not negative
     * @param maxBytes the most bytes to read, not negative (the core caps it)
     * @return the bytes read and the file's size when it was opened
     * @throws InvalidSpecException when the path is missing, is not a regular file (a directory, a FIFO: never
     *                              opened, so a read never blocks), or cannot be read
     * @throws PathEscapeException  when a link on the way leads outside the workspace
     */
    FileWindow read(String path, long offset, int maxBytes);

    /**
     * Writes a file atomically: a reader sees the old content or the new, never a part, and a failed write leaves
     * neither a partial file nor a temporary one. Missing parents are created (as by {@link #mkdirs}). A link at the
     * last component is replaced by the file, never written through.
     *
     * @param content the whole content
     * @param mode    Unix permission bits ({@code 0..0777}), applied where the backend has Unix modes
     * @throws InvalidSpecException when the path is the root or a directory, or a parent is not a directory
     * @throws PathEscapeException  when a parent leaves the workspace
     * @throws CodeExecException    when the write failed (nothing was left behind)
     */
    void write(String path, byte[] content, int mode);

    /**
     * Writes several files, each as {@link #write} does (atomically, missing parents created, a link at the target
     * replaced), in one batch where the backend can: a remote backend sends them in one request. The batch as a whole
     * is not atomic: a failure part way may leave the files before it written, never a part of one. The default
     * writes them one by one.
     *
     * @param files the files, their paths normalised as for {@link #write}
     * @throws InvalidSpecException when a path is the root or a directory, or a parent is not a directory
     * @throws PathEscapeException  when a parent leaves the workspace
     * @throws CodeExecException    when a write failed
     */
    default void writeAll(List<PutFile> files) {
        for (PutFile f : files) {
            write(f.path(), f.content(), f.mode());
        }
    }

    /**
     * Creates a directory and its missing parents, one component at a time, each re-checked so that a link planted in
     * between cannot redirect it. An existing directory (or a link inside the workspace to one) is fine.
     *
     * @throws InvalidSpecException when a component exists and is not a directory
     * @throws PathEscapeException  when a component leaves the workspace
     */
    void mkdirs(String path);

    /**
     * Deletes a file or a directory tree. A link at the last component is deleted itself, and a link inside the tree
     * is deleted, never followed: nothing outside the workspace is touched. Read-only directories inside the tree
     * (an {@link #importTree} with {@code readOnly}) are deleted too. A missing path does nothing.
     *
     * @throws InvalidSpecException for the workspace root
     * @throws PathEscapeException  when a parent leaves the workspace
     * @throws CodeExecException    when the tree could not be removed
     */
    void delete(String path);

    /**
     * Imports a tree (or a single file) at {@code to} in one batch: a host directory, or a part of this workspace
     * ({@link ImportSource#ofHostPath}, {@link ImportSource#ofWorkspace}). The source yields only directories and
     * regular files; links in it were left out by the core. Files keep their mode and modification time; directories
     * get the backend's default mode. The tree is built under a hidden temporary sibling
     * ({@link #IMPORT_TEMP_PREFIX}) and then moved into place, replacing what was at {@code to} (a previous import,
     * say): a failure leaves nothing at {@code to} and no temporary tree. Missing parents of {@code to} are created;
     * a link at {@code to} itself is replaced, not followed.
     *
     * <p>A container backend streams the entries into one tar archive, an E2B backend into one multipart upload.
     * A provider that needs the exact length of a file (a tar header) uses {@link FileEntry#size()}, which is the
     * size when the source opened it.
     *
     * @param readOnly drop the write bits of every imported file and directory (programs of the same user could put
     *                 them back; the sandbox also mounts such a tree read-only)
     * @throws InvalidSpecException when {@code to} is the root, or lies inside a host source on this host (a copy into
     *                              itself would never end)
     * @throws PathEscapeException  when a parent of {@code to}, or an entry of the source, leaves the workspace
     * @throws CodeExecException    when the import failed (nothing was left behind)
     */
    void importTree(ImportSource source, String to, boolean readOnly);

    /**
     * Exports regular files in one batch, lending each file's content to the visitor in the order given: a container
     * backend reads one tar archive, an E2B backend one download per file. Links are followed as by {@link #read},
     * and each file is opened without following a link at its last component. The visitor reads as much of each
     * stream as it wants; when it returns false, no further file is opened. Streams are closed by the provider.
     *
     * @throws InvalidSpecException when a path is missing, not a regular file, or cannot be read (an
     *                              {@link IOException} the visitor throws while reading a stream counts as that)
     * @throws PathEscapeException  when a link on the way leads outside the workspace
     */
    void export(List<String> paths, ExportVisitor visitor);

    /** Decides, entry by entry, how a {@link #walk} goes on. Must not throw checked exceptions. */
    @FunctionalInterface
    interface WalkVisitor {
        WalkAction visit(FileEntry entry);
    }

    /** What a {@link WalkVisitor} asks for after an entry. */
    enum WalkAction {
        /** Go on; into the entry when it is a directory. */
        CONTINUE,
        /** Leave out what this directory contains (the same as CONTINUE for other entries). */
        SKIP_SUBTREE,
        /** End the walk now. */
        STOP
    }

    /** Receives the files of an {@link #export}. */
    @FunctionalInterface
    interface ExportVisitor {

        /**
         * @param path    the path as given to {@link #export}
         * @param size    the file's size in bytes when it was opened
         * @param content the file's bytes from the start, lent for this call only
         * @return true to go on with the next file, false to stop
         */
        boolean file(String path, long size, InputStream content) throws IOException;
    }
}
