package dev.codeexec.sandbox;

import dev.codeexec.FileRef;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileContentVisitor;
import dev.codeexec.engine.FileChanges;
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
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The core host-directory file system, plus:
 * <ul>
 *   <li>a record of directories staged read-only, which every later run of the workspace mounts read-only (file modes
 *       alone would not stop a program that owns the files from {@code chmod}-ing them back);</li>
 *   <li>a record of the protected metadata the application staged below the workspace root (a repository's
 *       {@code .git} in {@code work/project}): every later run mounts it read-only, like the root's;</li>
 *   <li>ownership: what the application writes is given to the user programs run as ({@link SandboxUser}), so that
 *       they can change it like anything else in their workspace;</li>
 *   <li>the model's writes obey the rules programs do ({@link #checkWritableByPrograms}); the application's
 *       {@link #putFiles} stays trusted.</li>
 * </ul>
 */
final class SandboxWorkspaceFS implements WorkspaceFS, EngineFileImport {

    private final WorkspaceGates gates;
    private final HostWorkspaceFS delegate;
    private final SandboxUser user;
    private final PermissionProfile profile;
    private final List<String> protectedNames;
    private final Map<String, Set<String>> readOnly = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> protectedPaths = new ConcurrentHashMap<>();

    SandboxWorkspaceFS(WorkspaceGates gates, HostWorkspaceFS delegate) {
        this(gates, delegate, null, null);
    }

    /** @param profile the engine's profile, whose protected metadata the model's writes obey; null for none */
    SandboxWorkspaceFS(WorkspaceGates gates, HostWorkspaceFS delegate, SandboxUser user, PermissionProfile profile) {
        this.gates = gates;
        this.delegate = delegate;
        this.user = user;
        this.profile = profile;
        this.protectedNames = profile == null ? List.of() : List.copyOf(profile.protectedMetadata());
    }

    PathResolver resolver(Workspace ws) {
        return delegate.resolver(ws);
    }

    /**
     * Workspace-relative paths every run mounts read-only: the directories staged read-only, and the protected
     * metadata the application staged below the root (the layout protects what ends in a protected name).
     */
    Set<String> readOnlyPaths(Workspace ws) {
        Set<String> stages = readOnly.getOrDefault(ws.id(), Set.of());
        Set<String> repos = protectedPaths.getOrDefault(ws.id(), Set.of());
        if (repos.isEmpty()) {
            return Set.copyOf(stages);
        }
        Set<String> all = new java.util.HashSet<>(stages);
        all.addAll(repos);
        return Set.copyOf(all);
    }

    void forget(Workspace ws) {
        readOnly.remove(ws.id());
        protectedPaths.remove(ws.id());
    }

    @Override
    public void putFiles(Workspace ws, List<PutFile> files) {
        gates.exclusiveRun(ws, () -> {
            delegate.putFiles(ws, files);
            Path root = delegate.resolver(ws).root();
            for (PutFile f : files) {
                String rel = PathResolver.normalize(f.path());
                claim(root, rel, false);
                record(ws, rel, root, false);
            }
        });
    }

    /** Streams a file in (a snapshot's restore): given to the sandbox user like the application's files. */
    @Override
    public void writeFile(Workspace ws, String path, InputStream content, long size, int mode, Instant modified) {
        gates.exclusiveRun(ws, () -> {
            delegate.writeFile(ws, path, content, size, mode, modified);
            String rel = PathResolver.normalize(path);
            Path root = delegate.resolver(ws).root();
            claim(root, rel, false);
            record(ws, rel, root, false);
        });
    }

    @Override
    public void createDirectories(Workspace ws, String path) {
        gates.exclusiveRun(ws, () -> {
            delegate.createDirectories(ws, path);
            String rel = PathResolver.normalize(path);
            Path root = delegate.resolver(ws).root();
            claim(root, rel, false);
            record(ws, rel, root, false);
        });
    }

    /** The host's walk, which tells links and special files from files (a snapshot skips them), gated. */
    @Override
    public boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        return gates.exclusive(ws, () -> delegate.entries(ws, dir, visitor));
    }

    /** The host's streaming reads (a snapshot's capture), gated. */
    @Override
    public void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        gates.exclusiveRun(ws, () -> delegate.readFiles(ws, paths, visitor));
    }

    /** The engine's own file (a run's whole output), given to the sandbox user like the application's files. */
    @Override
    public void importEngineFile(Workspace ws, Path hostFile, String to) {
        gates.exclusiveRun(ws, () -> {
            delegate.importEngineFile(ws, hostFile, to);
            claim(delegate.resolver(ws).root(), PathResolver.normalize(to), false);
        });
    }

    /**
     * Refuses the model's write where programs could not write (see {@link ProtectedMetadata#refuseModelWrite}):
     * protected metadata, and directories staged read-only. The application's {@link #putFiles} is not checked.
     */
    @Override
    public void checkWritableByPrograms(Workspace ws, String path) {
        if (profile == null || profile.enforcement() != PermissionProfile.Enforcement.MANAGED) {
            return;
        }
        gates.exclusiveRun(ws, () -> ProtectedMetadata.refuseModelWrite(profile, delegate.resolver(ws).root(),
                PathResolver.normalize(path), readOnlyPaths(ws)));
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        gates.exclusiveRun(ws, () -> {
            delegate.stageDirectory(ws, hostSource, to, options);
            Path root = delegate.resolver(ws).root();
            String rel = PathResolver.normalize(to);
            claim(root, rel, true);
            record(ws, rel, root, true);
        });
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
        return gates.exclusive(ws, () -> {
            List<StagedInput> staged = delegate.stageInputs(ws, inputs);
            Path root = delegate.resolver(ws).root();
            for (StagedInput s : staged) {
                String rel = PathResolver.normalize(s.to());
                claim(root, rel, true);
                record(ws, rel, root, true);
            }
            return staged;
        });
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        // After most cells out/ is empty: that is seen without pausing the kernel (SettledOutputs says why it is safe).
        return gates.exclusiveUnlessSettled(ws, () -> SettledOutputs.emptyOut(delegate.resolver(ws).root(), spec),
                () -> delegate.collectOutputs(ws, spec));
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        return gates.exclusive(ws, () -> delegate.readFile(ws, path, offset, maxBytes));
    }

    @Override
    public Optional<FileInfo> stat(Workspace ws, String path) {
        return gates.exclusive(ws, () -> delegate.stat(ws, path));
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return gates.exclusive(ws, () -> delegate.list(ws, globOrDir));
    }

    @Override
    public FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        return gates.exclusive(ws, () -> delegate.list(ws, globOrDir, options));
    }

    /** The core's tracker, every look of which is a host-side file operation like any other: gated. */
    @Override
    public FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        FileChangeTracker t = gates.exclusive(ws, () -> delegate.trackChanges(ws, folders));
        return new FileChangeTracker() {
            @Override
            public FileChanges changes() {
                return gates.exclusive(ws, t::changes);
            }

            @Override
            public int trackedEntries() {
                return t.trackedEntries();
            }

            @Override
            public void close() {
                t.close();
            }
        };
    }

    @Override
    public void delete(Workspace ws, String path) {
        gates.exclusiveRun(ws, () -> delegate.delete(ws, path));
        forget(ws, PathResolver.normalize(path));
    }

    /** Forgets read-only stages and protected metadata at or below {@code rel} (they were replaced or deleted). */
    private void forget(Workspace ws, String rel) {
        for (Map<String, Set<String>> m : List.of(readOnly, protectedPaths)) {
            Set<String> set = m.get(ws.id());
            if (set != null) {
                set.removeIf(p -> rel.equals(".") || p.equals(rel) || p.startsWith(rel + "/"));
            }
        }
    }

    /** Gives what the application just wrote at {@code rel} (and the directories made for it) to the program's user. */
    private void claim(Path root, String rel, boolean tree) {
        if (user == null || !user.drops()) {
            return;
        }
        user.claimPath(root, rel);
        if (tree) {
            Path p = root.resolve(rel);
            if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                user.claimTree(p);
            }
        }
    }

    /**
     * Records the protected metadata below the workspace root in what the application wrote at {@code rel}: a
     * protected name among its components, or (for a staged directory) anywhere below it. The root's own is
     * protected by every run anyway.
     */
    private void record(Workspace ws, String rel, Path root, boolean tree) {
        if (protectedNames.isEmpty() || rel.equals(".")) {
            return;
        }
        Set<String> found = new java.util.LinkedHashSet<>();
        String[] parts = rel.split("/");
        for (int i = 1; i < parts.length; i++) {
            if (protectedNames.contains(parts[i])) {
                found.add(String.join("/", java.util.Arrays.copyOfRange(parts, 0, i + 1)));
                break;
            }
        }
        if (found.isEmpty() && tree && !protectedNames.contains(parts[0])) {
            Path top = root.resolve(rel);
            if (Files.isDirectory(top, LinkOption.NOFOLLOW_LINKS)) {
                try (java.util.stream.Stream<Path> walk = Files.walk(top)) {
                    walk.filter(p -> protectedNames.contains(p.getFileName().toString()))
                            .map(p -> root.relativize(p).toString())
                            .filter(p -> p.contains("/"))
                            .forEach(found::add);
                } catch (java.io.IOException | java.io.UncheckedIOException e) {
                    throw new dev.codeexec.engine.CodeExecException("cannot look for protected metadata in '" + rel
                            + "': " + e.getClass().getSimpleName(), e);
                }
            }
        }
        // Nested inside one another (a repository's .git holding another): the outermost protects the rest.
        found.removeIf(p -> found.stream().anyMatch(q -> !q.equals(p) && p.startsWith(q + "/")));
        if (!found.isEmpty()) {
            protectedPaths.computeIfAbsent(ws.id(), k -> ConcurrentHashMap.newKeySet()).addAll(found);
        }
    }
}
