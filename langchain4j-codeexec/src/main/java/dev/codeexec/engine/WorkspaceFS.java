package dev.codeexec.engine;

import dev.codeexec.FileRef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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

    /** Deletes a file or a directory tree inside the workspace. Deleting a missing path does nothing. */
    void delete(Workspace ws, String path);
}
