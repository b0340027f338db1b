package dev.codeexec.engine;

import dev.codeexec.FileRef;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Files in and out of a workspace. Every path is workspace-relative and checked by the one path resolver: absolute
 * paths, {@code ..} and symbolic links that lead outside are refused with {@link PathEscapeException}; nothing is
 * read through a link that leaves the workspace.
 */
public interface WorkspaceFS {

    /**
     * Writes files atomically, creating parent directories. When any path is invalid nothing is written.
     *
     * <p>This is the application's own, trusted write: it is not held to the rules of the engine's programs (an
     * application may stage a repository's {@code .git}, say). Writes the <em>model</em> asks for go through
     * {@link #checkWritableByPrograms} first.
     */
    void putFiles(Workspace ws, List<PutFile> files);

    /**
     * Refuses a write that programs of this engine could not make, so that what the model writes with its file tools
     * ({@code workspace_write_file}, {@code workspace_stage_artifact}) obeys the same rules as what it runs: the tools
     * call this before {@link #putFiles}. The one place an engine states which workspace paths its programs may not
     * write (the sandbox engine: protected metadata such as {@code .git} and directories staged read-only). The
     * default refuses nothing: on engines without such rules the model writes where programs can.
     *
     * @param ws   the workspace
     * @param path the workspace-relative path to be written
     * @throws PolicyViolationException when programs could not write {@code path}; the message names the rule
     */
    default void checkWritableByPrograms(Workspace ws, String path) {
    }

    /**
     * Copies a host directory (or file) into the workspace at {@code to}.
     *
     * @throws PolicyViolationException when {@code hostSource} is not under an input root of the engine
     */
    void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options);

    /**
     * Reads the files matching the globs ({@code **} crosses directories), contents inline: at most 4 MiB of each,
     * 1000 files and 64 MiB in all (use {@link #collectOutputs} to choose limits and see which were hit). Links out
     * of the workspace are skipped. A glob that matches nothing contributes nothing.
     */
    List<FileRef> collect(Workspace ws, List<String> globs);

    /** Stages inputs: artifacts, other workspace paths, and host paths under the engine's input roots. */
    List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs);

    /** Collects output files under the spec's limits, inlining and/or saving them as artifacts. */
    OutputManifest collectOutputs(Workspace ws, OutputSpec spec);

    /**
     * Reads a window of one file.
     *
     * @param offset   first byte to read
     * @param maxBytes most bytes to read (backends may cap it; the host-directory backends at 16 MiB)
     * @return the window; {@link FileRef#truncated()} is true when bytes follow the window
     * @throws InvalidSpecException when the file does not exist or is a directory
     */
    FileRef readFile(Workspace ws, String path, long offset, int maxBytes);

    /**
     * What is at one path, so that a caller can tell whether a file exists without catching an exception. Links
     * inside the workspace are followed as by {@link #readFile} (at every component, the last included); a link that
     * leads outside the workspace or does not resolve is refused, as a read is.
     *
     * @return the entry, its {@link FileInfo#path()} being the normalised {@code path}, {@link FileInfo#directory()}
     *         true for a directory and {@link FileInfo#sizeBytes()} the size of a regular file (0 otherwise); empty
     *         when nothing is there (also below a regular file), and when the workspace's access rules do not let
     *         the path be read (a listing leaves such paths out too)
     * @throws PathEscapeException when the path, or a link on the way, leads outside the workspace
     * @throws CodeExecException   when the workspace cannot be read (gone, backend unavailable)
     */
    Optional<FileInfo> stat(Workspace ws, String path);

    /**
     * Lists entries matching a glob, or the entries of a directory (recursively) when {@code globOrDir} names one.
     * Links out of the workspace are not listed. The core's file systems list at most 100,000 entries this way and
     * cannot say whether that was all: {@link #list(Workspace, String, ListOptions)} says so.
     */
    List<FileInfo> list(Workspace ws, String globOrDir);

    /**
     * Lists like {@link #list(Workspace, String)}, within the options' limits: the walk stops once it has found one
     * entry more than {@link ListOptions#maxEntries()}, so the cost is bounded by the limit and not by the size of the
     * tree, and the listing says whether it is {@linkplain FileListing#complete() complete}. When a limit cut it, which
     * entries are listed depends on the order in which the backend walks the tree. {@link ListOptions#maxDepth()}
     * applies to directory listings (a glob matches at whatever depth its pattern allows).
     *
     * <p>The default lists everything through {@link #list(Workspace, String)} and then cuts; the core's file systems
     * stop walking at the limit.
     */
    default FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        String spec = globOrDir == null || globOrDir.isBlank() ? "." : globOrDir.strip();
        boolean glob = spec.chars().anyMatch(c -> c == '*' || c == '?' || c == '[' || c == '{');
        String base = spec.equals(".") ? "" : spec + "/";
        List<FileInfo> out = new ArrayList<>();
        for (FileInfo f : list(ws, globOrDir)) {
            if (!glob && options.maxDepth() > 0 && f.path().startsWith(base)
                    && f.path().substring(base.length()).split("/").length > options.maxDepth()) {
                continue;
            }
            if (options.withoutContents().stream().anyMatch(d -> f.path().startsWith(d + "/")
                    && !(spec.equals(d) || spec.startsWith(d + "/")))) {
                continue;
            }
            if (out.size() == options.maxEntries()) {
                return new FileListing(out, false);
            }
            out.add(f);
        }
        return new FileListing(out, true);
    }

    /**
     * Starts following the files below {@code folders} (workspace-relative directories, {@code work} and {@code out}
     * for the tools), so that {@link FileChangeTracker#changes()} tells which files were created, modified or deleted
     * between two looks. The first look is taken now. The caller closes the tracker.
     *
     * <p>How finely a modification is seen depends on the file system. The core's host-directory file systems on
     * Linux are told of every change by the kernel (inotify): a look costs what changed, not the size of the tree, and
     * a file rewritten with the same size within the same second is still seen. Elsewhere each look lists the
     * folders again, within a smaller bound, and compares sizes and modification times. The default, for file systems
     * built without the core's primitives, compares sizes from {@link #list(Workspace, String, ListOptions)} at most
     * {@value ListingChangeTracker#LIMIT} entries.
     *
     * @throws CodeExecException when the workspace cannot be read
     */
    default FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        return new ListingChangeTracker(this, ws, folders);
    }

    /**
     * Walks the entries below directory {@code dir} (recursively, a directory before what it contains) without
     * following links: links and special files are reported as such ({@link WorkspaceEntry.Kind#LINK},
     * {@link WorkspaceEntry.Kind#OTHER}), never descended or opened. Hidden temporary names of writes in progress and
     * paths the workspace's access rules deny are left out. A missing {@code dir} yields nothing. For callers that copy
     * a workspace entry by entry (snapshots); the visitor bounds the walk.
     *
     * <p>The default lists {@code dir} through {@link #list(Workspace, String, ListOptions)}, which cannot tell links or
     * special files and reports no modes ({@link WorkspaceEntry#mode()} -1); the core's file systems walk their
     * primitives and report both.
     *
     * @param visitor receives each entry; false stops the walk
     * @return true when the walk went through the whole tree, false when the visitor or a bound stopped it
     * @throws PathEscapeException when {@code dir} leads outside the workspace
     */
    default boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        Optional<FileInfo> top = stat(ws, dir);
        if (top.isEmpty() || !top.get().directory()) {
            return true;
        }
        FileListing listing = list(ws, dir, ListOptions.maxEntries(100_000));
        for (FileInfo f : listing.entries()) {
            WorkspaceEntry e = new WorkspaceEntry(f.path(), f.directory() ? WorkspaceEntry.Kind.DIRECTORY
                    : WorkspaceEntry.Kind.FILE, f.directory() ? 0 : f.sizeBytes(), -1, Instant.EPOCH);
            if (!visitor.test(e)) {
                return false;
            }
        }
        return listing.complete();
    }

    /**
     * Reads regular files one after another, lending each one's content to the visitor as a stream, so that a caller
     * can copy files of any size with bounded memory. Links inside the workspace are followed as by {@link #readFile}.
     *
     * <p>The default reads each file in windows of {@link #readFile} (1 MiB at a time); the core's file systems stream
     * through their primitives (one archive for a container backend).
     *
     * @throws InvalidSpecException when a path is missing or not a regular file (or the visitor failed)
     * @throws PathEscapeException  when a path leads outside the workspace
     */
    default void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        final int window = 1 << 20;
        for (String path : paths) {
            FileRef first = readFile(ws, path, 0, window);
            long size = first.sizeBytes();
            Enumeration<InputStream> windows = new Enumeration<>() {
                private long offset = 0;
                private FileRef next = first;

                @Override
                public boolean hasMoreElements() {
                    if (next == null && offset < size) {
                        next = readFile(ws, path, offset, window);
                        if (next.content().length == 0) {
                            offset = size; // the file shrank meanwhile
                            next = null;
                        }
                    }
                    return next != null;
                }

                @Override
                public InputStream nextElement() {
                    if (!hasMoreElements()) {
                        throw new NoSuchElementException();
                    }
                    byte[] b = next.content();
                    offset += b.length;
                    next = null;
                    return new ByteArrayInputStream(b);
                }
            };
            try (InputStream in = new SequenceInputStream(windows)) {
                if (!visitor.file(path, size, in)) {
                    return;
                }
            } catch (IOException e) {
                throw new InvalidSpecException("could not read '" + path + "': " + e.getMessage(), e);
            }
        }
    }

    /**
     * Writes one file from a stream, atomically: a reader sees the old content or the new, and when the stream fails
     * (an {@link IOException}, such as a digest found wrong at its end) the file keeps its old content (or stays
     * absent) and nothing is left behind. Missing parents are created; a link at {@code path} is replaced, not
     * written through. This is the application's own, trusted write, as {@link #putFiles}.
     *
     * <p>The default reads the stream into memory and calls {@link #putFiles}; the core's file systems stream it into
     * a temporary name and move that into place.
     *
     * @param sizeBytes the number of bytes the stream holds, for the quota check before writing
     * @param mode      Unix permission bits ({@code 0..0777})
     * @param modified  the modification time to set, or null for now
     * @throws CodeExecException when the write or the stream failed; the cause is the stream's {@link IOException}
     */
    default void writeFile(Workspace ws, String path, InputStream content, long sizeBytes, int mode,
                           Instant modified) {
        byte[] bytes;
        try {
            bytes = content.readAllBytes();
        } catch (IOException e) {
            throw new CodeExecException("could not write '" + path + "': " + e.getMessage(), e);
        }
        putFiles(ws, List.of(PutFile.of(path, bytes, mode & 0777)));
    }

    /**
     * Creates a directory and its missing parents (an existing one is fine), so that a copied workspace keeps its
     * empty directories. The application's own, trusted write, as {@link #putFiles}.
     *
     * <p>The default writes a placeholder file into it and deletes that again; the core's file systems create the
     * directory through their primitives.
     *
     * @throws InvalidSpecException when a component exists and is not a directory
     * @throws PathEscapeException  when the path leads outside the workspace
     */
    default void createDirectories(Workspace ws, String path) {
        String placeholder = path + "/.codeexec-mkdir";
        putFiles(ws, List.of(PutFile.of(placeholder, new byte[0])));
        delete(ws, placeholder);
    }

    /** Deletes a file or a directory tree inside the workspace. Deleting a missing path does nothing. */
    void delete(Workspace ws, String path);
}
