package dev.codeexec.workspace.spi;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What {@link WorkspaceFiles#importTree} copies: a file or directory tree, walked by the core so that the rule "links
 * in a source are never followed" is written once. A source yields directories and regular files only; links and
 * special files are left out, so an import cannot reach past its input root through them.
 *
 * <p>The core builds sources with {@link #ofHostPath} (a host directory or file under an input root, already checked)
 * and {@link #ofWorkspace} (a part of the workspace, for {@code workspace://} inputs). The walk is live: what the
 * source holds when {@link #forEach} runs is what is imported.
 */
public interface ImportSource {

    /**
     * The real host path of the source root when the source is a host tree; empty otherwise. A provider whose
     * workspaces live on this host refuses a destination inside it: the copy would grow into itself.
     */
    Optional<Path> hostPath();

    /**
     * The total size in bytes of the regular files the source holds now (a fresh walk; links are not followed), for
     * reporting and for a provider that checks a disk limit before it imports. 0 when the source cannot be walked.
     */
    long sizeBytes();

    /**
     * Visits the source in pre-order: the root first, as {@code "."} (a directory, or the one file of a file source),
     * then each directory before what it contains. Paths are normalised and relative to the source root. Each file's
     * content is lent for the call; its {@link FileEntry#size()} is the size when it was opened.
     *
     * @throws IOException when the source cannot be read, or as the visitor threw it
     */
    void forEach(Visitor visitor) throws IOException;

    /** Receives the entries of a source; a provider writes each one into its temporary tree. */
    interface Visitor {

        /** A directory to create (its parent was visited before it). */
        void directory(FileEntry directory) throws IOException;

        /** A regular file to write, with its mode and modification time; {@code content} is lent for this call. */
        void file(FileEntry file, InputStream content) throws IOException;
    }

    /**
     * A host file or directory tree. Links inside it are left out, never followed; a root that is itself a link
     * yields nothing. The caller has checked that the path is allowed (under an input root).
     *
     * @param realPath an absolute path with links already resolved ({@link Path#toRealPath})
     */
    static ImportSource ofHostPath(Path realPath) {
        return new HostTreeSource(realPath);
    }

    /**
     * A file or tree of a workspace, read through the workspace's own primitives ({@link WorkspaceFiles#walk} and
     * {@link WorkspaceFiles#export}). Links inside it are left out, never followed.
     *
     * @param path a path already {@linkplain WorkspaceFiles#resolve resolved}, so that it names no link itself
     */
    static ImportSource ofWorkspace(WorkspaceFiles files, String path) {
        return new WorkspaceTreeSource(files, path);
    }
}
