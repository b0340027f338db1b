package dev.codeexec.workspace;

import dev.codeexec.FileRef;
import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.OutputLimit;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * {@link WorkspaceFS} for backends whose workspaces are host directories (local and sandbox). Every path goes
 * through {@link PathResolver}; nothing is read through a link that leaves the workspace; writes are atomic.
 *
 * <p>Host paths can be staged only from the input roots given to the builder, checked with links resolved.
 */
public final class HostWorkspaceFS implements WorkspaceFS {

    /** {@value} bytes: most of one file {@link #collect} reads. */
    public static final int COLLECT_MAX_FILE_BYTES = 4 << 20;

    /** {@value}: most files {@link #collect} returns; it also stops at 64 MiB in total. */
    public static final int COLLECT_MAX_FILES = 1000;

    /** {@value} bytes: the largest window {@link #readFile} returns (16 MiB), whatever is asked. */
    public static final int READ_MAX_BYTES = 16 << 20;

    /** {@value}: most entries a listing or a glob walk visits, so a huge tree cannot exhaust memory. */
    public static final int MAX_WALK_ENTRIES = 100_000;

    private final Function<Workspace, Path> hostPaths;
    private final List<Path> inputRoots;
    private final ArtifactService artifacts;
    private final Function<Workspace, PathAccess> access;

    private HostWorkspaceFS(Builder b) {
        this.hostPaths = Objects.requireNonNull(b.hostPaths, "hostPaths");
        List<Path> roots = new ArrayList<>();
        for (Path r : b.inputRoots) {
            try {
                roots.add(r.toRealPath());
            } catch (IOException e) {
                throw new InvalidSpecException("input root does not exist: " + r);
            }
        }
        this.inputRoots = List.copyOf(roots);
        this.artifacts = b.artifacts;
        this.access = b.access == null ? ws -> PathAccess.ALLOW_ALL : b.access;
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
        PathResolver r = resolver(ws);
        PathAccess a = access.apply(ws);
        // Validate every path before writing any, so one bad path writes nothing.
        for (PutFile f : files) {
            String norm = PathResolver.normalize(f.path());
            requireWrite(a, norm);
            checkWritable(r, norm);
        }
        for (PutFile f : files) {
            writeAtomically(r, f.path(), f.content(), f.mode());
        }
    }

    @Override
    public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
        PathResolver r = resolver(ws);
        Path source = requireUnderInputRoot(hostSource);
        String dest = PathResolver.normalize(to);
        requireWrite(access.apply(ws), dest);
        copyIntoWorkspace(r, source, dest, options != null && options.readOnly());
    }

    @Override
    public List<FileRef> collect(Workspace ws, List<String> globs) {
        // The same walk and limits as collectOutputs, so memory is bounded here too.
        return collectOutputs(ws, OutputSpec.builder().globs(globs).maxFiles(COLLECT_MAX_FILES)
                .maxFileBytes(COLLECT_MAX_FILE_BYTES).maxTotalBytes(OutputSpec.DEFAULT_MAX_TOTAL_BYTES).build())
                .files();
    }

    @Override
    public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
        PathResolver r = resolver(ws);
        PathAccess a = access.apply(ws);
        List<Runnable> actions = new ArrayList<>();
        List<StagedInput> staged = new ArrayList<>();
        // Resolve and check every input first: a bad one stages nothing.
        for (InputSpec in : inputs) {
            String from = in.from().strip();
            if (ArtifactRef.isArtifactRef(from)) {
                Artifact art;
                ArtifactRef ref;
                try {
                    ref = ArtifactRef.parse(from);
                    art = requireArtifacts().load(ref);
                } catch (IllegalArgumentException e) {
                    throw new InvalidSpecException("input '" + from + "' is not a valid artifact reference: "
                            + e.getMessage());
                }
                String dest = destination(in, lastSegment(ref.name()));
                requireWrite(a, dest);
                r.resolve(dest);
                actions.add(() -> writeAtomically(r, dest, art.content(), PutFile.DEFAULT_MODE));
                staged.add(new StagedInput(from, dest, art.ref().version(), art.size()));
            } else if (from.startsWith("workspace://")) {
                String src = PathResolver.normalize(from.substring("workspace://".length()));
                requireRead(a, src);
                Path source = r.resolveExisting(src);
                String dest = destination(in, lastSegment(src));
                requireWrite(a, dest);
                requireOutside(source, r.resolve(dest), dest);
                actions.add(() -> copyIntoWorkspace(r, source, dest, false));
                staged.add(new StagedInput(from, dest, null, sizeOf(source)));
            } else if (from.startsWith("host://") || from.startsWith("/")) {
                String hostPath = from.startsWith("host://") ? from.substring("host://".length()) : from;
                if (!hostPath.startsWith("/") || hostPath.indexOf('\0') >= 0) {
                    // A relative path would be resolved against the JVM's working directory.
                    throw new InvalidSpecException("input '" + from + "' must name an absolute host path, "
                            + "such as host:///data/file.csv");
                }
                Path source = requireUnderInputRoot(Path.of(hostPath));
                String dest = destination(in, source.getFileName().toString());
                requireWrite(a, dest);
                r.resolve(dest);
                actions.add(() -> copyIntoWorkspace(r, source, dest, false));
                staged.add(new StagedInput(from, dest, null, sizeOf(source)));
            } else {
                throw new InvalidSpecException("input '" + from + "' has an unknown source; use artifact://name[@v], "
                        + "workspace://path, or host:///absolute/path under a configured input root");
            }
        }
        actions.forEach(Runnable::run);
        return staged;
    }

    @Override
    public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
        OutputSpec s = spec == null ? OutputSpec.DEFAULT : spec;
        PathResolver r = resolver(ws);
        PathAccess a = access.apply(ws);
        TreeMap<String, Long> matched = match(r, a, s.globs());
        Set<OutputLimit> hit = EnumSet.noneOf(OutputLimit.class);
        List<FileRef> files = new ArrayList<>();
        long total = 0;
        for (var e : matched.entrySet()) {
            if (files.size() >= s.maxFiles()) {
                hit.add(OutputLimit.MAX_FILES);
                break;
            }
            long remaining = s.maxTotalBytes() - total;
            if (remaining <= 0) {
                hit.add(OutputLimit.MAX_TOTAL_BYTES);
                break;
            }
            int window = (int) Math.min(Math.min(s.maxFileBytes(), remaining), Integer.MAX_VALUE - 16);
            FileRef f = readAt(r.resolve(e.getKey()), e.getKey(), 0, window);
            if (f.truncated()) {
                hit.add(f.sizeBytes() > s.maxFileBytes() ? OutputLimit.MAX_FILE_BYTES : OutputLimit.MAX_TOTAL_BYTES);
            }
            total += f.content().length;
            files.add(f);
        }
        if (s.save()) {
            ArtifactService store = requireArtifacts();
            for (FileRef f : files) {
                if (f.truncated()) {
                    throw new InvalidSpecException("cannot save '" + f.name() + "' as an artifact: it was truncated at "
                            + "the output limits (" + f.sizeBytes() + " bytes); raise maxFileBytes/maxTotalBytes");
                }
            }
            List<FileRef> saved = new ArrayList<>();
            for (FileRef f : files) {
                ArtifactRef ref = saveArtifact(store, s.namePrefix() + artifactName(f.name()), f);
                saved.add(f.withSavedAs(ref.toString()));
            }
            files = saved;
        }
        if (!s.inline()) {
            files = files.stream().map(FileRef::withoutContent).toList();
        }
        return new OutputManifest(files, hit);
    }

    @Override
    public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
        if (offset < 0) {
            throw new InvalidSpecException("offset (" + offset + ") must not be negative");
        }
        if (maxBytes < 0) {
            throw new InvalidSpecException("maxBytes (" + maxBytes + ") must not be negative");
        }
        maxBytes = Math.min(maxBytes, READ_MAX_BYTES);
        PathResolver r = resolver(ws);
        String norm = PathResolver.normalize(path);
        requireRead(access.apply(ws), norm);
        Path p = r.resolveExisting(norm);
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidSpecException("'" + norm + "' is a directory; list it instead");
        }
        if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            // Opening a FIFO would block until a writer appears; devices and sockets are not files to read either.
            throw new InvalidSpecException("'" + norm + "' is not a regular file");
        }
        return readAt(p, norm, offset, maxBytes);
    }

    @Override
    public List<FileInfo> list(Workspace ws, String globOrDir) {
        PathResolver r = resolver(ws);
        PathAccess a = access.apply(ws);
        String spec = globOrDir == null || globOrDir.isBlank() ? "." : globOrDir.strip();
        List<FileInfo> out = new ArrayList<>();
        if (WorkspaceGlob.isGlob(spec)) {
            match(r, a, List.of(spec)).forEach((rel, size) -> out.add(new FileInfo(rel, size, false)));
            return out;
        }
        String norm = PathResolver.normalize(spec);
        Path dir = r.resolveExisting(norm);
        if (!Files.isDirectory(dir)) {
            out.add(new FileInfo(norm, sizeOf(dir), false));
            return out;
        }
        walk(r, a, dir, (rel, attrs) -> out.add(new FileInfo(rel, attrs.isDirectory() ? 0 : attrs.size(),
                attrs.isDirectory())), true);
        out.sort((x, y) -> x.path().compareTo(y.path()));
        return out;
    }

    @Override
    public void delete(Workspace ws, String path) {
        PathResolver r = resolver(ws);
        String norm = PathResolver.normalize(path);
        if (norm.equals(".")) {
            throw new InvalidSpecException("refusing to delete the workspace root; use the engine's cleanup");
        }
        requireWrite(access.apply(ws), norm);
        // The last component itself is not followed: deleting a link deletes the link.
        FileTrees.deleteTree(r.resolveEntry(norm));
    }

    // ---- internals ----

    private ArtifactService requireArtifacts() {
        if (artifacts == null) {
            throw new UnsupportedCapabilityException("no ArtifactService is configured for this engine; "
                    + "artifact:// inputs and saved outputs need one (builder().artifactService(...))");
        }
        return artifacts;
    }

    /**
     * An artifact name for a workspace path ({@link SafeNames#path}): characters outside the artifact name rules
     * ({@code [A-Za-z0-9._-]} per segment) become {@code _}, so {@code out/q1 report.md} is saved as
     * {@code out/q1_report.md}.
     */
    static String artifactName(String workspacePath) {
        return SafeNames.path(workspacePath);
    }

    private static ArtifactRef saveArtifact(ArtifactService store, String name, FileRef f) {
        try {
            return store.save(name, f.content(), f.mimeType());
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException("cannot save '" + f.name() + "' as an artifact: " + e.getMessage());
        }
    }

    private Path requireUnderInputRoot(Path hostSource) {
        Path real;
        try {
            real = hostSource.toRealPath();
        } catch (IOException e) {
            throw new PolicyViolationException("host path is not under an input root configured for this engine, "
                    + "or does not exist");
        }
        for (Path root : inputRoots) {
            if (real.startsWith(root)) {
                return real;
            }
        }
        throw new PolicyViolationException("host path is not under an input root configured for this engine, "
                + "or does not exist");
    }

    private static String destination(InputSpec in, String defaultName) {
        return PathResolver.normalize(in.to() == null || in.to().isBlank()
                ? WorkspaceLayout.INPUTS + "/" + defaultName : in.to());
    }

    private static String lastSegment(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? path : path.substring(slash + 1);
    }

    private static void requireRead(PathAccess a, String rel) {
        if (!a.canRead(rel)) {
            throw new PolicyViolationException("reading '" + rel + "' is denied by the workspace's access policy");
        }
    }

    private static void requireWrite(PathAccess a, String rel) {
        if (!a.canWrite(rel)) {
            throw new PolicyViolationException("writing '" + rel + "' is denied by the workspace's access policy");
        }
    }

    /**
     * Checks, without creating anything, what {@link PathResolver#resolveForWrite} will check: the target is not the
     * root or a directory, no parent escapes, and the nearest existing parent is a directory. A link at the target
     * itself is fine: the write replaces it.
     */
    private static void checkWritable(PathResolver r, String norm) {
        if (norm.equals(".")) {
            throw new InvalidSpecException("cannot write to the workspace root itself; name a file");
        }
        Path entry = r.resolveEntry(norm);
        if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidSpecException("'" + norm + "' is a directory");
        }
        Path existing = entry.getParent();
        while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (!Files.isDirectory(existing, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidSpecException("'" + r.relativize(existing) + "' is not a directory");
        }
    }

    private static void writeAtomically(PathResolver r, String rel, byte[] content, int mode) {
        Path target = r.resolveForWrite(rel);
        Path tmp = null;
        try {
            tmp = Files.createTempFile(target.getParent(), ".put-", ".tmp");
            Files.write(tmp, content);
            FileTrees.setMode(tmp, mode);
            // A rename replaces a link at the target instead of writing through it.
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
        } catch (IOException e) {
            throw new CodeExecException("could not write '" + PathResolver.normalize(rel) + "': "
                    + e.getClass().getSimpleName(), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // Best effort: the temporary name is hidden from collection.
                }
            }
        }
    }

    /** Copies a host file or tree to {@code dest} via a hidden temporary sibling, so a failure leaves nothing. */
    private static void copyIntoWorkspace(PathResolver r, Path source, String dest, boolean readOnly) {
        String norm = PathResolver.normalize(dest);
        if (norm.equals(".")) {
            throw new InvalidSpecException("cannot stage onto the workspace root itself; name a destination");
        }
        // Not resolveForWrite: an existing directory at the destination is replaced (restaging a skill, say).
        Path target = r.resolveEntryForWrite(norm);
        requireOutside(source, target, norm);
        Path tmp = target.resolveSibling(".stage-" + Long.toHexString(System.nanoTime()) + "-"
                + target.getFileName());
        try {
            FileTrees.copyTree(source, tmp);
            if (readOnly) {
                FileTrees.makeReadOnly(tmp);
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                FileTrees.deleteTree(target);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            FileTrees.deleteTree(tmp);
            throw new CodeExecException("could not stage into '" + dest + "': " + e.getClass().getSimpleName(), e);
        }
    }

    /** A tree copied into itself would grow until a path got too long. */
    private static void requireOutside(Path source, Path target, String dest) {
        if (target.toAbsolutePath().normalize().startsWith(source)) {
            throw new InvalidSpecException("cannot stage into '" + dest + "': it lies inside the source being copied");
        }
    }

    private static long sizeOf(Path p) {
        try {
            if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                return Files.size(p);
            }
            long[] sum = {0};
            Files.walkFileTree(p, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()) {
                        sum[0] += attrs.size();
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
            return sum[0];
        } catch (IOException e) {
            return 0;
        }
    }

    /** Reads a window without following a link at the last component. */
    private static FileRef readAt(Path p, String rel, long offset, int maxBytes) {
        try (SeekableByteChannel ch = Files.newByteChannel(p, Set.of(StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS))) {
            long size = ch.size();
            long start = Math.min(offset, size);
            int len = (int) Math.min(maxBytes, size - start);
            ByteBuffer buf = ByteBuffer.allocate(len);
            ch.position(start);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // Keep reading until the window is full or the file ends.
            }
            byte[] content = buf.array();
            if (buf.position() < len) {
                content = java.util.Arrays.copyOf(content, buf.position());
            }
            boolean truncated = start + content.length < size;
            return new FileRef(rel, MimeTypes.guess(rel, content), content, size, truncated, null);
        } catch (IOException e) {
            throw new InvalidSpecException("cannot read '" + rel + "': " + e.getClass().getSimpleName());
        }
    }

    /** Files (not directories) matching any glob, sorted, with sizes. Links out of the workspace are skipped. */
    private TreeMap<String, Long> match(PathResolver r, PathAccess a, List<String> globs) {
        TreeMap<String, Long> out = new TreeMap<>();
        for (String g : globs) {
            WorkspaceGlob glob = WorkspaceGlob.compile(g);
            Path base;
            try {
                base = r.resolve(glob.base());
            } catch (PathEscapeException e) {
                continue;
            }
            if (!Files.exists(base)) {
                continue;
            }
            if (Files.isRegularFile(base)) {
                String rel = r.relativize(base);
                if (glob.matches(glob.base()) && a.canRead(rel)) {
                    out.put(glob.base(), sizeOf(base));
                }
                continue;
            }
            walk(r, a, base, (rel, attrs) -> {
                if (!attrs.isDirectory() && glob.matches(rel)) {
                    out.put(rel, attrs.size());
                }
            }, false);
        }
        return out;
    }

    private interface EntryVisitor {
        void visit(String relativePath, BasicFileAttributes attrs);
    }

    /**
     * Walks a directory inside the workspace without following links; a link to a regular file inside the workspace
     * is reported with its target's attributes, links leading outside are skipped. Hidden temporary files of
     * atomic writes are skipped. Stops after {@link #MAX_WALK_ENTRIES}.
     */
    private static void walk(PathResolver r, PathAccess a, Path dir, EntryVisitor v, boolean includeDirs) {
        int[] count = {0};
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                    String rel = r.relativize(d);
                    if (!d.equals(dir)) {
                        if (d.getFileName().toString().startsWith(".stage-")) {
                            return FileVisitResult.SKIP_SUBTREE; // a directory being staged, not yet in place
                        }
                        if (!a.canRead(rel)) {
                            return FileVisitResult.SKIP_SUBTREE;
                        }
                        if (includeDirs) {
                            v.visit(rel, attrs);
                        }
                    }
                    return ++count[0] > MAX_WALK_ENTRIES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                    String name = f.getFileName().toString();
                    if (name.startsWith(".put-") || name.startsWith(".stage-")) {
                        return FileVisitResult.CONTINUE;
                    }
                    String rel = r.relativize(f);
                    if (!a.canRead(rel)) {
                        return FileVisitResult.CONTINUE;
                    }
                    if (attrs.isSymbolicLink()) {
                        Path real;
                        try {
                            real = f.toRealPath();
                        } catch (IOException e) {
                            return FileVisitResult.CONTINUE;
                        }
                        if (!r.contains(real) || !Files.isRegularFile(real)
                                || !a.canRead(r.relativize(real))) {
                            return FileVisitResult.CONTINUE;
                        }
                        attrs = Files.readAttributes(real, BasicFileAttributes.class);
                    } else if (!attrs.isRegularFile()) {
                        return FileVisitResult.CONTINUE;
                    }
                    v.visit(rel, attrs);
                    return ++count[0] > MAX_WALK_ENTRIES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path f, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new CodeExecException("cannot list the workspace: " + e.getClass().getSimpleName(), e);
        }
    }

    /** Builder for {@link HostWorkspaceFS}. */
    public static final class Builder {
        private Function<Workspace, Path> hostPaths;
        private List<Path> inputRoots = List.of();
        private ArtifactService artifacts;
        private Function<Workspace, PathAccess> access;

        /** Required: maps a workspace to its host directory (and validates that it belongs to the engine). */
        public Builder hostPaths(Function<Workspace, Path> hostPaths) {
            this.hostPaths = hostPaths;
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

        public HostWorkspaceFS build() {
            return new HostWorkspaceFS(this);
        }
    }
}
