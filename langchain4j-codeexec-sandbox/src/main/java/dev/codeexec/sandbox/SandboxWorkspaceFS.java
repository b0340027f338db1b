package dev.codeexec.sandbox;

import dev.codeexec.FileRef;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The core host-directory file system, plus a record of directories staged read-only, which every later run of the
 * workspace mounts read-only (file modes alone would not stop a program that owns the files from
 * {@code chmod}-ing them back).
 */
final class SandboxWorkspaceFS implements WorkspaceFS {

    private final WorkspaceGates gates;
    private final HostWorkspaceFS delegate;
    private final Map<String, Set<String>> readOnly = new ConcurrentHashMap<>();

    SandboxWorkspaceFS(WorkspaceGates gates, HostWorkspaceFS delegate) {
        this.gates = gates;
        this.delegate = delegate;
    }

    PathResolver resolver(Workspace ws) {
        return delegate.resolver(ws);
    }

    /** Workspace-relative paths staged read-only in this workspace. */
    Set<String> readOnlyPaths(Workspace ws) {
        return Set.copyOf(readOnly.getOrDefault(ws.id(), Set.of()));
    }

    void forget(Workspace ws) {
        readOnly.remove(ws.id());
    }

    @Override
    public void putFiles(Workspace ws, List<PutFile> files) {
        gates.exclusiveRun(ws, () -> delegate.putFiles(ws, files));
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        gates.exclusiveRun(ws, () -> delegate.stageDirectory(ws, hostSource, to, options));
        String rel = PathResolver.normalize(to);
        if (options != null && options.readOnly()) {
            readOnly.computeIfAbsent(ws.id(), k -> ConcurrentHashMap.newKeySet()).add(rel);
        } else {
            forget(ws, rel);
        }
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        return gates.exclusive(ws, () -> delegate.collect(ws, globs));
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
        return gates.exclusive(ws, () -> delegate.stageInputs(ws, inputs));
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        return gates.exclusive(ws, () -> delegate.collectOutputs(ws, spec));
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        return gates.exclusive(ws, () -> delegate.readFile(ws, path, offset, maxBytes));
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return gates.exclusive(ws, () -> delegate.list(ws, globOrDir));
    }

    @Override
    public void delete(Workspace ws, String path) {
        gates.exclusiveRun(ws, () -> delegate.delete(ws, path));
        forget(ws, PathResolver.normalize(path));
    }

    /** Forgets read-only stages at or below {@code rel} (they were replaced or deleted). */
    private void forget(Workspace ws, String rel) {
        Set<String> set = readOnly.get(ws.id());
        if (set != null) {
            set.removeIf(p -> rel.equals(".") || p.equals(rel) || p.startsWith(rel + "/"));
        }
    }
}
