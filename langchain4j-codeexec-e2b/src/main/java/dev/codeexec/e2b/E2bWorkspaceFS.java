package dev.codeexec.e2b;

import dev.codeexec.FileRef;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileContentVisitor;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
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
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.StandardWorkspaceFS;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@link E2bEngine}'s file system: the core's {@link StandardWorkspaceFS} over {@link EnvdFiles}, except
 * {@link #putFiles}, which costs two requests whatever the paths (the upload and the helper that moves the files into
 * place): the standard one asks Stat about each path and its parents first, which the helper checks in the sandbox
 * anyway. The rules stay the same: every path normalised and checked before anything is written, a link that leaves
 * the workspace or does not resolve refused ({@link dev.codeexec.engine.PathEscapeException}), a target that is a
 * directory or a parent that is not one refused ({@link InvalidSpecException}), missing parents created, each file
 * written atomically, nothing written when one path is refused. The engine sets no access policy nor quota on its
 * standard file system (a sandbox's disk is its template's), so there is none to check here.
 */
final class E2bWorkspaceFS implements WorkspaceFS, EngineFileImport {

    private final StandardWorkspaceFS standard;
    private final Function<Workspace, EnvdFiles> files;

    E2bWorkspaceFS(StandardWorkspaceFS standard, Function<Workspace, EnvdFiles> files) {
        this.standard = standard;
        this.files = files;
    }

    @Override
    public void putFiles(Workspace ws, List<PutFile> list) {
        EnvdFiles f = files.apply(ws);
        List<PutFile> normalized = new ArrayList<>(list.size());
        for (PutFile p : list) {
            String norm = PathResolver.normalize(p.path());
            if (norm.equals(".")) {
                throw new InvalidSpecException("cannot write to the workspace root itself; name a file");
            }
            normalized.add(PutFile.of(norm, p.content(), p.mode()));
        }
        if (!normalized.isEmpty()) {
            f.put(normalized);
        }
    }

    @Override
    public void checkWritableByPrograms(Workspace ws, String path) {
        standard.checkWritableByPrograms(ws, path);
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        standard.stageDirectory(ws, hostSource, to, options);
    }

    @Override
    public void importEngineFile(Workspace ws, Path hostFile, String to) {
        standard.importEngineFile(ws, hostFile, to);
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        return standard.collect(ws, globs);
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
        return standard.stageInputs(ws, inputs);
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        return standard.collectOutputs(ws, spec);
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        return standard.readFile(ws, path, offset, maxBytes);
    }

    @Override
    public Optional<FileInfo> stat(Workspace ws, String path) {
        return standard.stat(ws, path);
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return standard.list(ws, globOrDir);
    }

    @Override
    public FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        return standard.list(ws, globOrDir, options);
    }

    @Override
    public boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        return standard.entries(ws, dir, visitor);
    }

    @Override
    public void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        standard.readFiles(ws, paths, visitor);
    }

    @Override
    public void writeFile(Workspace ws, String path, InputStream content, long size, int mode, Instant modified) {
        standard.writeFile(ws, path, content, size, mode, modified);
    }

    @Override
    public void createDirectories(Workspace ws, String path) {
        standard.createDirectories(ws, path);
    }

    @Override
    public FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        return standard.trackChanges(ws, folders);
    }

    @Override
    public void delete(Workspace ws, String path) {
        standard.delete(ws, path);
    }
}
