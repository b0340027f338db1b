package dev.codeexec.container;

import dev.codeexec.FileRef;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileContentVisitor;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.EngineFileImport;
import dev.codeexec.workspace.StandardWorkspaceFS;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The file operations of an engine with a Python kernel per workspace: the engine's own ({@link StandardWorkspaceFS}),
 * except that collecting outputs first asks the workspace's kernel, through its relay, whether {@code out/} is empty.
 * After most cells it is, and then nothing is read through the Engine API: listing {@code out/} is an archive request
 * (a {@code GET} of a tar stream), which costs more than the cell itself.
 *
 * <p>The answer comes from inside the container, from a program of the workspace: an "empty" that is a lie only
 * keeps the workspace's own files out of one result, as deleting them would; nothing of the host is read or trusted on
 * it. It is asked only for globs under {@code out/}; any other answer (a file, a link, no kernel, no answer in time)
 * collects as usual. A file a cell's thread or child writes after the look is in the next collection's result.
 */
final class KernelOutputsFS implements WorkspaceFS, EngineFileImport {

    private final StandardWorkspaceFS fs;
    private final Predicate<Workspace> outputsSeenEmpty;

    /** @param outputsSeenEmpty whether the workspace's kernel sees {@code out/} as a real, empty directory now */
    KernelOutputsFS(StandardWorkspaceFS fs, Predicate<Workspace> outputsSeenEmpty) {
        this.fs = fs;
        this.outputsSeenEmpty = outputsSeenEmpty;
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        OutputSpec s = spec == null ? OutputSpec.DEFAULT : spec;
        if (s.globs().stream().allMatch(KernelOutputsFS::underOut) && outputsSeenEmpty.test(ws)) {
            return new OutputManifest(List.of(), Set.of());
        }
        return fs.collectOutputs(ws, spec);
    }

    /** A glob that can match nothing outside {@code out/}. */
    static boolean underOut(String glob) {
        return glob.startsWith("out/") && !glob.contains("..") && !glob.contains("\\") && !glob.contains("//");
    }

    // ---- everything else is the engine's own ----

    @Override
    public void putFiles(Workspace ws, List<PutFile> files) {
        fs.putFiles(ws, files);
    }

    @Override
    public void checkWritableByPrograms(Workspace ws, String path) {
        fs.checkWritableByPrograms(ws, path);
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        fs.stageDirectory(ws, hostSource, to, options);
    }

    @Override
    public void importEngineFile(Workspace ws, Path hostFile, String to) {
        fs.importEngineFile(ws, hostFile, to);
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        return fs.collect(ws, globs);
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
        return fs.stageInputs(ws, inputs);
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        return fs.readFile(ws, path, offset, maxBytes);
    }

    @Override
    public Optional<FileInfo> stat(Workspace ws, String path) {
        return fs.stat(ws, path);
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return fs.list(ws, globOrDir);
    }

    @Override
    public FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        return fs.list(ws, globOrDir, options);
    }

    @Override
    public FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        return fs.trackChanges(ws, folders);
    }

    @Override
    public boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        return fs.entries(ws, dir, visitor);
    }

    @Override
    public void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        fs.readFiles(ws, paths, visitor);
    }

    @Override
    public void writeFile(Workspace ws, String path, InputStream content, long sizeBytes, int mode,
                          Instant modified) {
        fs.writeFile(ws, path, content, sizeBytes, mode, modified);
    }

    @Override
    public void createDirectories(Workspace ws, String path) {
        fs.createDirectories(ws, path);
    }

    @Override
    public void delete(Workspace ws, String path) {
        fs.delete(ws, path);
    }
}
