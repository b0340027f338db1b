package dev.codeexec.workspace;

import dev.codeexec.FileRef;
import dev.codeexec.artifact.ArtifactService;
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
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@link WorkspaceFS} for backends whose workspaces are host directories (local and sandbox): the
 * {@link StandardWorkspaceFS} rules on host primitives. Every path goes through {@link PathResolver}; nothing is read
 * through a link that leaves the workspace; writes are atomic.
 *
 * <p>Host paths can be staged only from the input roots given to the builder, checked with links resolved.
 */
public final class HostWorkspaceFS implements WorkspaceFS, EngineFileImport {

    /** {@value} bytes: most of one file {@link #collect} reads. */
    public static final int COLLECT_MAX_FILE_BYTES = StandardWorkspaceFS.COLLECT_MAX_FILE_BYTES;

    /** {@value}: most files {@link #collect} returns; it also stops at 64 MiB in total. */
    public static final int COLLECT_MAX_FILES = StandardWorkspaceFS.COLLECT_MAX_FILES;

    /** {@value} bytes: the largest window {@link #readFile} returns (16 MiB), whatever is asked. */
    public static final int READ_MAX_BYTES = StandardWorkspaceFS.READ_MAX_BYTES;

    /** {@value}: most entries a listing or a glob walk visits, so a huge tree cannot exhaust memory. */
    public static final int MAX_WALK_ENTRIES = StandardWorkspaceFS.MAX_WALK_ENTRIES;

    private final Function<Workspace, Path> hostPaths;
    private final StandardWorkspaceFS rules;

    private HostWorkspaceFS(Builder b) {
        this.hostPaths = Objects.requireNonNull(b.hostPaths, "hostPaths");
        this.rules = b.rules.files(ws -> new HostWorkspaceFiles(resolver(ws)))
                .changeFeed(b.watchChanges ? HostChangeFeed.forHost(hostPaths) : null).build();
    }

    /** A builder; {@link Builder#hostPaths} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /** The resolver of a workspace (checks that it still exists). */
    public PathResolver resolver(Workspace ws) {
        return new PathResolver(hostPaths.apply(ws));
    }

    @Override
    public void putFiles(Workspace ws, List<PutFile> files) {
        rules.putFiles(ws, files);
    }

    @Override
    public boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        return rules.entries(ws, dir, visitor);
    }

    @Override
    public void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        rules.readFiles(ws, paths, visitor);
    }

    @Override
    public void writeFile(Workspace ws, String path, InputStream content, long size, int mode, Instant modified) {
        rules.writeFile(ws, path, content, size, mode, modified);
    }

    @Override
    public void createDirectories(Workspace ws, String path) {
        rules.createDirectories(ws, path);
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        rules.stageDirectory(ws, hostSource, to, options);
    }

    @Override
    public void importEngineFile(Workspace ws, Path hostFile, String to) {
        rules.importEngineFile(ws, hostFile, to);
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        return rules.collect(ws, globs);
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
        return rules.stageInputs(ws, inputs);
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        return rules.collectOutputs(ws, spec);
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        return rules.readFile(ws, path, offset, maxBytes);
    }

    @Override
    public Optional<FileInfo> stat(Workspace ws, String path) {
        return rules.stat(ws, path);
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return rules.list(ws, globOrDir);
    }

    @Override
    public FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        return rules.list(ws, globOrDir, options);
    }

    /**
     * Follows the files below the folders; on Linux the kernel tells which files changed (inotify), so a look costs
     * what changed, not the size of the tree (see {@link StandardWorkspaceFS#trackChanges}).
     */
    @Override
    public FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        return rules.trackChanges(ws, folders);
    }

    @Override
    public void delete(Workspace ws, String path) {
        rules.delete(ws, path);
    }

    /** Builder for {@link HostWorkspaceFS}: the host directories, and the rules' settings of {@link StandardWorkspaceFS}. */
    public static final class Builder {
        private Function<Workspace, Path> hostPaths;
        private final StandardWorkspaceFS.Builder rules = StandardWorkspaceFS.builder();
        private boolean watchChanges = true;

        /** Required: maps a workspace to its host directory (and validates that it belongs to the engine). */
        public Builder hostPaths(Function<Workspace, Path> hostPaths) {
            this.hostPaths = hostPaths;
            return this;
        }

        /** As {@link StandardWorkspaceFS.Builder#inputRoots}. */
        public Builder inputRoots(List<Path> inputRoots) {
            rules.inputRoots(inputRoots);
            return this;
        }

        /** As {@link StandardWorkspaceFS.Builder#artifacts}. */
        public Builder artifacts(ArtifactService artifacts) {
            rules.artifacts(artifacts);
            return this;
        }

        /** As {@link StandardWorkspaceFS.Builder#access}. */
        public Builder access(Function<Workspace, PathAccess> access) {
            rules.access(access);
            return this;
        }

        /**
         * Whether change trackers are told of changes by the kernel where it can (Linux; default true), rather than
         * walking the folders on every look.
         */
        Builder watchChanges(boolean watch) {
            this.watchChanges = watch;
            return this;
        }

        /** As {@link StandardWorkspaceFS.Builder#trackingLimits}, for tests. */
        Builder trackingLimits(int tracked, int compared) {
            rules.trackingLimits(tracked, compared);
            return this;
        }

        public HostWorkspaceFS build() {
            return new HostWorkspaceFS(this);
        }
    }
}
