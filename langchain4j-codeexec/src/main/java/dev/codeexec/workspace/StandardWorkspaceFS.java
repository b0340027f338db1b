package dev.codeexec.workspace;

import dev.codeexec.FileRef;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileContentVisitor;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.engine.OutputLimit;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The one {@link WorkspaceFS}: every file rule of the library, written once on top of a backend's
 * {@link WorkspaceFiles} primitives. Path normalisation, the three input sources, output globs, limits, inline or
 * artifact output, MIME types and the {@link PathAccess} checks are decided here; the primitives only move bytes and
 * follow links no further than the workspace.
 *
 * <p>A backend builds one on its primitives ({@code filesOf} returns its {@link WorkspaceFiles} for a workspace):
 * <pre>{@code
 * WorkspaceFS fs = StandardWorkspaceFS.builder()
 *         .files(ws -> filesOf(ws))           // throws WorkspaceGoneException when the workspace is gone
 *         .inputRoots(inputRoots).artifacts(artifacts)
 *         .build();
 * }</pre>
 * Host-directory backends use {@link HostWorkspaceFS}, which is this class on the host primitives.
 *
 * <p>Host paths can be staged only from the input roots given to the builder, checked with links resolved on this
 * host (the JVM's), whatever the backend.
 */
public final class StandardWorkspaceFS implements WorkspaceFS, EngineFileImport {

    /** {@value} bytes: most of one file {@link #collect} reads. */
    public static final int COLLECT_MAX_FILE_BYTES = 4 << 20;

    /** {@value}: most files {@link #collect} returns; it also stops at 64 MiB in total. */
    public static final int COLLECT_MAX_FILES = 1000;

    /** {@value} bytes: the largest window {@link #readFile} returns (16 MiB), whatever is asked. */
    public static final int READ_MAX_BYTES = 16 << 20;

    /** {@value}: most entries a listing or a glob walk visits, so a huge tree cannot exhaust memory. */
    public static final int MAX_WALK_ENTRIES = 100_000;

    /**
     * {@value}: most files and directories a {@link #trackChanges change tracker} with a change feed follows in one
     * workspace (below its folders); above it a look reports that nothing was compared.
     */
    public static final int MAX_TRACKED_ENTRIES = 200_000;

    /**
     * {@value}: most files and directories a {@link #trackChanges change tracker} without a change feed lists per look;
     * above it a look reports that nothing was compared. Smaller than {@link #MAX_TRACKED_ENTRIES} because every look
     * pays for all of them.
     */
    public static final int MAX_COMPARED_ENTRIES = 5_000;

    private final Function<Workspace, WorkspaceFiles> files;
    private final InputStaging inputs;
    private final ArtifactService artifacts;
    private final Function<Workspace, PathAccess> access;
    /** Tells trackers what changed; null without one. */
    private final ChangeFeed changeFeed;
    /** Refuses a write for the model that would not fit in the workspace's quota; see {@link Builder#roomCheck}. */
    private final BiConsumer<Workspace, Long> roomCheck;
    private final int trackedLimit;
    private final int comparedLimit;

    private StandardWorkspaceFS(Builder b) {
        this.files = Objects.requireNonNull(b.files, "files");
        List<Path> roots = new ArrayList<>();
        for (Path r : b.inputRoots) {
            try {
                roots.add(r.toRealPath());
            } catch (IOException e) {
                throw new InvalidSpecException("input root does not exist: " + r);
            }
        }
        this.inputs = new InputStaging(this, List.copyOf(roots));
        this.artifacts = b.artifacts;
        this.access = b.access == null ? ws -> PathAccess.ALLOW_ALL : b.access;
        this.changeFeed = b.changeFeed;
        this.roomCheck = b.roomCheck == null ? (ws, bytes) -> { } : b.roomCheck;
        this.trackedLimit = b.trackedLimit;
        this.comparedLimit = b.comparedLimit;
    }

    /** A builder; {@link Builder#files} is required. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void putFiles(Workspace ws, List<PutFile> list) {
        WorkspaceFiles f = files.apply(ws);
        PathAccess a = access.apply(ws);
        // Validate every path (once) before writing any, so one bad path writes nothing.
        List<PutFile> normalized = new ArrayList<>(list.size());
        long bytes = 0;
        for (PutFile p : list) {
            String norm = PathResolver.normalize(p.path());
            requireWrite(a, norm);
            FileStreams.checkWritable(f, norm);
            normalized.add(PutFile.of(norm, p.content(), p.mode()));
            bytes += p.content().length;
        }
        roomCheck.accept(ws, bytes);
        f.writeAll(normalized);
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        WorkspaceFiles f = files.apply(ws);
        Path source = inputs.requireUnderInputRoot(hostSource);
        String dest = PathResolver.normalize(to);
        requireWrite(access.apply(ws), dest);
        importInto(f, ImportSource.ofHostPath(source), dest, options != null && options.readOnly());
    }

    @Override
    public void importEngineFile(Workspace ws, Path hostFile, String to) {
        WorkspaceFiles f = files.apply(ws);
        String dest = PathResolver.normalize(to);
        requireWrite(access.apply(ws), dest);
        Path real;
        try {
            real = hostFile.toRealPath();
        } catch (IOException e) {
            throw new CodeExecException("the engine's file to import is gone", e);
        }
        importInto(f, ImportSource.ofHostPath(real), dest, false);
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        // The same walk and limits as collectOutputs, so memory is bounded here too.
        return collectOutputs(ws, OutputSpec.builder().globs(globs).maxFiles(COLLECT_MAX_FILES)
                .maxFileBytes(COLLECT_MAX_FILE_BYTES).maxTotalBytes(OutputSpec.DEFAULT_MAX_TOTAL_BYTES).build())
                .files();
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> list) {
        WorkspaceFiles f = files.apply(ws);
        return inputs.stage(f, access.apply(ws), list);
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        OutputSpec s = spec == null ? OutputSpec.DEFAULT : spec;
        WorkspaceFiles f = files.apply(ws);
        // The search stops at the first file past maxFiles: enough to know that the limit was hit, without walking
        // the rest of a large tree. Which files are collected then depends on the walk's order.
        TreeMap<String, Long> matched = new TreeMap<>();
        boolean complete = new WorkspaceWalk(f, access.apply(ws)).match(s.globs(), Set.of(), (path, size) -> {
            matched.put(path, size);
            return matched.size() <= s.maxFiles();
        });
        Set<OutputLimit> hit = EnumSet.noneOf(OutputLimit.class);
        if (!complete && matched.size() <= s.maxFiles()) {
            hit.add(OutputLimit.MAX_WALK_ENTRIES);
        }
        List<FileRef> read = new ArrayList<>();
        // One batch for the files that fit the count; each window is what remains of the byte budgets.
        List<String> wanted = new ArrayList<>(matched.keySet()).subList(0, Math.min(matched.size(), s.maxFiles()));
        long[] total = {0};
        f.export(wanted, (path, size, in) -> {
            long remaining = s.maxTotalBytes() - total[0];
            long window = Math.min(Math.min(s.maxFileBytes(), remaining), Integer.MAX_VALUE - 16);
            byte[] content = in.readNBytes((int) Math.min(window, size));
            boolean truncated = content.length < size;
            if (truncated) {
                hit.add(size > s.maxFileBytes() ? OutputLimit.MAX_FILE_BYTES : OutputLimit.MAX_TOTAL_BYTES);
            }
            total[0] += content.length;
            read.add(new FileRef(path, MimeTypes.guess(path, content), content, size, truncated, null));
            if (read.size() < wanted.size() && s.maxTotalBytes() - total[0] <= 0) {
                hit.add(OutputLimit.MAX_TOTAL_BYTES);
                return false;
            }
            return true;
        });
        if (matched.size() > s.maxFiles() && read.size() == s.maxFiles()) {
            hit.add(OutputLimit.MAX_FILES);
        }
        List<FileRef> out = read;
        if (s.save()) {
            ArtifactService store = requireArtifacts();
            for (FileRef r : out) {
                if (r.truncated()) {
                    throw new InvalidSpecException("cannot save '" + r.name() + "' as an artifact: it was truncated at "
                            + "the output limits (" + r.sizeBytes() + " bytes); raise maxFileBytes/maxTotalBytes");
                }
            }
            List<FileRef> saved = new ArrayList<>();
            for (FileRef r : out) {
                ArtifactRef ref = saveArtifact(store, s.namePrefix() + artifactName(r.name()), r);
                saved.add(r.withSavedAs(ref.toString()));
            }
            out = saved;
        }
        if (!s.inline()) {
            out = out.stream().map(FileRef::withoutContent).toList();
        }
        return new OutputManifest(out, hit);
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        if (offset < 0) {
            throw new InvalidSpecException("offset (" + offset + ") must not be negative");
        }
        if (maxBytes < 0) {
            throw new InvalidSpecException("maxBytes (" + maxBytes + ") must not be negative");
        }
        int window = Math.min(maxBytes, READ_MAX_BYTES);
        WorkspaceFiles f = files.apply(ws);
        String norm = PathResolver.normalize(path);
        requireRead(access.apply(ws), norm);
        FileEntry e = existing(f, norm);
        if (e.isDirectory()) {
            throw new InvalidSpecException("'" + norm + "' is a directory; list it instead");
        }
        if (!e.isFile()) {
            // Opening a FIFO would block until a writer appears; devices and sockets are not files to read either.
            throw new InvalidSpecException("'" + norm + "' is not a regular file");
        }
        FileWindow w = f.read(norm, offset, window);
        byte[] content = w.content();
        boolean truncated = Math.min(offset, w.size()) + content.length < w.size();
        return new FileRef(norm, MimeTypes.guess(norm, content), content, w.size(), truncated, null);
    }

    @Override
    public Optional<FileInfo> stat(Workspace ws, String path) {
        WorkspaceFiles f = files.apply(ws);
        String norm = PathResolver.normalize(path);
        if (!access.apply(ws).canRead(norm)) {
            return Optional.empty();
        }
        return f.stat(f.resolve(norm)).map(e -> new FileInfo(norm, e.isFile() ? e.size() : 0, e.isDirectory()));
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        return list(ws, globOrDir, ListOptions.maxEntries(MAX_WALK_ENTRIES)).entries();
    }

    @Override
    public FileListing list(Workspace ws, String globOrDir, ListOptions options) {
        WorkspaceFiles f = files.apply(ws);
        WorkspaceWalk walk = new WorkspaceWalk(f, access.apply(ws));
        String spec = globOrDir == null || globOrDir.isBlank() ? "." : globOrDir.strip();
        Set<String> collapsed = new HashSet<>();
        for (String d : options.withoutContents()) {
            collapsed.add(PathResolver.normalize(d));
        }
        int max = Math.min(options.maxEntries(), MAX_WALK_ENTRIES);
        List<FileInfo> out = new ArrayList<>();
        boolean complete;
        if (WorkspaceGlob.isGlob(spec)) {
            complete = walk.match(List.of(spec), collapsed, (rel, size) -> add(out, max,
                    new FileInfo(rel, size, false)));
        } else {
            String norm = PathResolver.normalize(spec);
            requireRead(access.apply(ws), norm);
            FileEntry e = existing(f, norm);
            if (!e.isDirectory()) {
                return new FileListing(List.of(new FileInfo(norm, e.isFile() ? e.size() : 0, false)), true);
            }
            // Entries are reported under the directory's resolved path, as a program in the workspace would find them.
            complete = walk.walk(e.path(), true, options.maxDepth(), collapsed, x -> add(out, max,
                    new FileInfo(x.path(), x.isDirectory() ? 0 : x.size(), x.isDirectory())));
        }
        out.sort((x, y) -> x.path().compareTo(y.path()));
        return new FileListing(out, complete);
    }

    /** Adds an entry unless the listing is full; false (stop) when it was. */
    private static boolean add(List<FileInfo> out, int max, FileInfo info) {
        if (out.size() >= max) {
            return false;
        }
        out.add(info);
        return true;
    }

    /**
     * Follows the files below the folders through the backend's primitives. With a change feed (the host-directory
     * file systems on Linux) a look re-reads only what the kernel reported changed, and follows up to
     * {@value #MAX_TRACKED_ENTRIES} entries; without one every look walks the folders again, up to
     * {@value #MAX_COMPARED_ENTRIES} entries, and compares sizes and modification times.
     */
    @Override
    public FileChangeTracker trackChanges(Workspace ws, List<String> folders) {
        List<String> norm = folders.stream().map(PathResolver::normalize).toList();
        files.apply(ws); // fails fast when the workspace is gone
        return new WorkspaceChangeTracker(ws, files, access, norm, changeFeed, trackedLimit, comparedLimit);
    }

    @Override
    public boolean entries(Workspace ws, String dir, Predicate<WorkspaceEntry> visitor) {
        String norm = PathResolver.normalize(dir);
        requireRead(access.apply(ws), norm);
        return FileStreams.entries(files.apply(ws), access.apply(ws), norm, visitor);
    }

    @Override
    public void readFiles(Workspace ws, List<String> paths, FileContentVisitor visitor) {
        FileStreams.readFiles(files.apply(ws), access.apply(ws), paths, visitor);
    }

    @Override
    public void writeFile(Workspace ws, String path, InputStream content, long size, int mode, Instant modified) {
        String norm = PathResolver.normalize(path);
        requireWrite(access.apply(ws), norm);
        roomCheck.accept(ws, size);
        FileStreams.writeFile(files.apply(ws), norm, content, size, mode, modified);
    }

    @Override
    public void createDirectories(Workspace ws, String path) {
        String norm = PathResolver.normalize(path);
        requireWrite(access.apply(ws), norm);
        files.apply(ws).mkdirs(norm);
    }

    @Override
    public void delete(Workspace ws, String path) {
        WorkspaceFiles f = files.apply(ws);
        String norm = PathResolver.normalize(path);
        if (norm.equals(".")) {
            throw new InvalidSpecException("refusing to delete the workspace root; use the engine's cleanup");
        }
        requireWrite(access.apply(ws), norm);
        f.delete(norm);
    }

    // ---- rules shared with InputStaging ----

    ArtifactService requireArtifacts() {
        if (artifacts == null) {
            throw new UnsupportedCapabilityException("no ArtifactService is configured for this engine; "
                    + "artifact:// inputs and saved outputs need one (builder().artifactService(...))");
        }
        return artifacts;
    }

    static void importInto(WorkspaceFiles f, ImportSource source, String dest, boolean readOnly) {
        if (dest.equals(".")) {
            throw new InvalidSpecException("cannot stage onto the workspace root itself; name a destination");
        }
        f.importTree(source, dest, readOnly);
    }

    static void requireRead(PathAccess a, String rel) {
        if (!a.canRead(rel)) {
            throw new PolicyViolationException("reading '" + rel + "' is denied by the workspace's access policy");
        }
    }

    static void requireWrite(PathAccess a, String rel) {
        if (!a.canWrite(rel)) {
            throw new PolicyViolationException("writing '" + rel + "' is denied by the workspace's access policy");
        }
    }

    /**
     * An artifact name for a workspace path ({@link SafeNames#path}): characters outside the artifact name rules
     * ({@code [A-Za-z0-9._-]} per segment) become {@code _}, so {@code out/q1 report.md} is saved as
     * {@code out/q1_report.md}.
     */
    static String artifactName(String workspacePath) {
        return SafeNames.path(workspacePath);
    }

    // ---- internals ----

    /** The entry a path names with links inside the workspace followed; its path is the resolved one. */
    private static FileEntry existing(WorkspaceFiles f, String norm) {
        String real = f.resolve(norm);
        return f.stat(real).orElseThrow(() -> new InvalidSpecException("'" + norm
                + "' does not exist in the workspace"));
    }

    private static ArtifactRef saveArtifact(ArtifactService store, String name, FileRef f) {
        try {
            return store.save(name, f.content(), f.mimeType());
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException("cannot save '" + f.name() + "' as an artifact: " + e.getMessage());
        }
    }

    /** Builder for {@link StandardWorkspaceFS}. */
    public static final class Builder {
        private Function<Workspace, WorkspaceFiles> files;
        private List<Path> inputRoots = List.of();
        private ArtifactService artifacts;
        private Function<Workspace, PathAccess> access;
        private ChangeFeed changeFeed;
        private BiConsumer<Workspace, Long> roomCheck;
        private int trackedLimit = MAX_TRACKED_ENTRIES;
        private int comparedLimit = MAX_COMPARED_ENTRIES;

        /**
         * Required: the primitives of a workspace. Called once at the start of every operation; it validates that the
         * workspace belongs to the engine and throws {@link dev.codeexec.engine.WorkspaceGoneException} when it no
         * longer exists.
         */
        public Builder files(Function<Workspace, WorkspaceFiles> files) {
            this.files = files;
            return this;
        }

        /** Host directories from which host paths may be staged; default none. */
        public Builder inputRoots(List<Path> inputRoots) {
            this.inputRoots = List.copyOf(inputRoots);
            return this;
        }

        /** The artifact store for {@code artifact://} inputs and saved outputs; default none. */
        public Builder artifacts(ArtifactService artifacts) {
            this.artifacts = artifacts;
            return this;
        }

        /** Finer per-workspace access rules; default {@link PathAccess#ALLOW_ALL}. */
        public Builder access(Function<Workspace, PathAccess> access) {
            this.access = access;
            return this;
        }

        /**
         * Checks that files the model writes fit in the workspace's disk quota before they are written: given the
         * workspace and the bytes about to be written, it throws {@link dev.codeexec.engine.WorkspaceFullException}
         * when they would not fit (for example {@link WorkspaceSpace#requireRoom} on the host side of a volume).
         * Writes must not dig into room a backend keeps for its own bookkeeping. Default none.
         */
        public Builder roomCheck(BiConsumer<Workspace, Long> roomCheck) {
            this.roomCheck = roomCheck;
            return this;
        }

        /** The core's own change feed (host directories on Linux); default none. */
        Builder changeFeed(ChangeFeed feed) {
            this.changeFeed = feed;
            return this;
        }

        /** Smaller tracker limits than {@link #MAX_TRACKED_ENTRIES} and {@link #MAX_COMPARED_ENTRIES}, for tests. */
        Builder trackingLimits(int tracked, int compared) {
            this.trackedLimit = tracked;
            this.comparedLimit = compared;
            return this;
        }

        /**
         * @throws InvalidSpecException when an input root does not exist
         */
        public StandardWorkspaceFS build() {
            return new StandardWorkspaceFS(this);
        }
    }
}
