package dev.codeexec.engine;

import dev.codeexec.FileRef;
import java.nio.file.Path;
import java.util.List;

/**
 * Files in and out of a workspace. Every path is workspace-relative and checked by the one path resolver: absolute
 * paths, {@code ..} and symbolic links that lead outside are refused with {@link PathEscapeException}; nothing is
 * read through a link that leaves the workspace.
 */
public interface WorkspaceFS {

    /**
     * Writes files atomically, creating parent directories. When any path is invalid nothing is written.
     */
    void putFiles(Workspace ws, List<PutFile> files);

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
     * Lists entries matching a glob, or the entries of a directory (recursively) when {@code globOrDir} names one.
     * Links out of the workspace are not listed.
     */
    List<FileInfo> list(Workspace ws, String globOrDir);

    /** Deletes a file or a directory tree inside the workspace. Deleting a missing path does nothing. */
    void delete(Workspace ws, String path);
}
