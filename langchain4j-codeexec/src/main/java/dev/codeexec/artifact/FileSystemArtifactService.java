package dev.codeexec.artifact;

import dev.codeexec.engine.BackendUnavailableException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The embedded, durable {@link ArtifactService}: every version is a file under one root directory, so artifacts
 * survive restarts and can be shared by several instances or processes over the same root.
 *
 * <p><b>Warning</b>: the root must be writable only by this service's user. Names can never leave the root: every
 * directory on a name's path is checked not to be a symbolic link (and its real path compared with the expected
 * one) when it is used, and version files are opened without following links. A process that can write under
 * the root while the service runs could still race those checks; keep the root out of any workspace.
 *
 * <pre>{@code
 * ArtifactService artifacts = FileSystemArtifactService.at(Path.of("var/artifacts"));
 * ArtifactRef ref = artifacts.save("reports/q1.md", bytes, "text/markdown");   // artifact://reports/q1.md@1
 * Artifact latest = artifacts.load(ArtifactRef.parse("artifact://reports/q1.md")); // the latest version
 * }</pre>
 *
 * <p><b>Layout</b> (stable; tools may read it, but should write through this class):
 * <pre>
 * root/reports/q1.md/@versions/v1.bin    the bytes of version 1, exactly as saved
 * root/reports/q1.md/@versions/v1.json   its metadata: MIME type, size, SHA-256, creation time
 * root/reports/q1.md/@versions/latest    a hint: a version number near the top (see below)
 * </pre>
 * Each name segment is a directory; the versions live in a directory called {@code @versions}, which no valid name
 * segment can equal, so {@code reports} and {@code reports/q1.md} can both be names.
 *
 * <p><b>Guarantees</b>:
 * <ul>
 *   <li>Atomic: the bytes are written to a temporary file in the version directory, forced to disk, then renamed
 *       into place ({@link StandardCopyOption#ATOMIC_MOVE}). A crash leaves at most an invisible temporary file
 *       or an unused version number, never a partial version.</li>
 *   <li>Distinct versions: a save claims its number by creating the metadata file with
 *       {@link StandardOpenOption#CREATE_NEW}, retrying with the next number if another instance or process won
 *       it; saves of one name inside this instance are also serialised by a lock.</li>
 *   <li>Flat in the version count: a save and a load of the latest version start from the {@code latest} hint
 *       and touch a few files, however many versions the name has. The hint is checked before it is used (it must
 *       parse and name an existing claim) and probed past when it lags; a missing, torn or wrong hint costs one
 *       directory listing and is rewritten. Correctness never depends on it.</li>
 *   <li>Integrity: a load checks the size and SHA-256 recorded at save time and refuses a damaged version.</li>
 *   <li>Private: on POSIX file systems, directories it creates are {@code rwx------} and files {@code rw-------}.</li>
 * </ul>
 * Storage failures are {@link BackendUnavailableException}s whose messages name the artifact, never a host path.
 */
public final class FileSystemArtifactService implements ArtifactService {

    /** The directory, inside a name's directory, that holds its versions. Not a valid name segment. */
    static final String VERSIONS_DIR = "@versions";

    /** Prefix of temporary files; never matches a version file, so listings skip them. */
    static final String TEMP_PREFIX = ".tmp-";


    /** A save retries when a concurrent delete (possibly in another process) removes its directory under it. */
    private static final int SAVE_ATTEMPTS = 3;

    /**
     * How far a save or a load follows the claims above the {@link LatestVersionPointer latest hint}, or walks down
     * past unfinished claims, before it lists the whole directory instead. A hint lags only by the saves that ran
     * concurrently with the last one or crashed, so in practice the budget is never reached; it bounds the cost of a
     * hint that is far behind (an older release wrote the versions, a restored backup) to that of one listing.
     */
    static final int PROBE_BUDGET = 64;

    /**
     * Lock stripes for saves and deletes in this instance, chosen by the name's hash. A fixed number keeps memory
     * bounded whatever the number of names; two names sharing a stripe merely wait for each other.
     */
    private static final int LOCK_STRIPES = 64;

    private final Path root;
    private final ArtifactStoreFiles files;
    private final ReentrantLock[] locks = new ReentrantLock[LOCK_STRIPES];

    private FileSystemArtifactService(Path realRoot, boolean posix) {
        this.root = realRoot;
        this.files = new ArtifactStoreFiles(realRoot, posix);
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new ReentrantLock();
        }
    }

    /**
     * A service storing under {@code root}, which is created (with its parents) when missing; on POSIX file
     * systems the directories created are private to the user. An existing root is used as is, with every version
     * already in it.
     *
     * @param root the root directory; a symbolic link to a directory is fine (its target is used)
     * @return a service over that root
     * @throws IllegalArgumentException     when {@code root} exists and is not a directory
     * @throws BackendUnavailableException  when it cannot be created or read
     */
    public static FileSystemArtifactService at(Path root) {
        Objects.requireNonNull(root, "root");
        boolean posix = root.getFileSystem().supportedFileAttributeViews().contains("posix");
        try {
            if (!Files.exists(root)) {
                if (posix) {
                    Files.createDirectories(root, ArtifactStoreFiles.privateDirectory());
                } else {
                    Files.createDirectories(root);
                }
            }
            if (!Files.isDirectory(root)) {
                // The caller configured this path, so naming it here helps and leaks nothing new.
                throw new IllegalArgumentException("artifact root (" + root + ") is not a directory");
            }
            return new FileSystemArtifactService(root.toRealPath(), posix);
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot create or open the artifact root directory: "
                    + ArtifactStoreFiles.reason(e), e);
        }
    }

    @Override
    public ArtifactRef save(String name, byte[] content, String mimeType) {
        Objects.requireNonNull(content, "content");
        return save(name, ch -> {
            ArtifactStoreFiles.writeFully(ch, content);
            return ArtifactVersions.metadata(content, ArtifactNames.mimeType(mimeType));
        }, mimeType);
    }

    /**
     * Streams the bytes to a temporary file while hashing them, then publishes them as {@link #save(String, byte[],
     * String)} does: nothing of the stream is held in memory. A stream that fails leaves no version.
     */
    @Override
    public ArtifactRef saveStream(String name, InputStream content, String mimeType) {
        Objects.requireNonNull(content, "content");
        String mime = ArtifactNames.mimeType(mimeType);
        return save(name, ch -> ArtifactStreams.copy(content, ch, mime), mimeType);
    }

    /** Writes the producer's bytes straight into the version's temporary file, hashing them on the way. */
    @Override
    public ArtifactRef saveWritten(String name, ArtifactWriter writer, String mimeType) {
        Objects.requireNonNull(writer, "writer");
        String mime = ArtifactNames.mimeType(mimeType);
        return save(name, ch -> ArtifactStreams.write(writer, ch, mime), mimeType);
    }

    /** Streams the content file, checking its size and SHA-256 against the metadata when the reader reaches its end. */
    @Override
    public <T> T read(String name, int version, ArtifactReader<T> reader) {
        ArtifactNames.validate(name);
        Objects.requireNonNull(reader, "reader");
        try {
            Path dir = files.versionsDir(name, false);
            // Visible: both files there as regular files (two lstat calls, not a listing of the directory).
            if (dir == null || version < 1 || !ArtifactStreams.visible(dir, version)) {
                throw ArtifactNotFoundException.forVersion(name, version,
                        dir == null ? List.of() : ArtifactVersions.listVersions(dir));
            }
            return ArtifactStreams.read(dir, name, version, reader);
        } catch (NoSuchFileException e) {
            throw ArtifactNotFoundException.forVersion(name, version, List.of());
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("load", name, e);
        }
    }

    private ArtifactRef save(String name, ContentWriter writer, String mimeType) {
        ArtifactNames.validate(name);
        ArtifactNames.mimeType(mimeType);
        ReentrantLock lock = lockFor(name);
        lock.lock();
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return saveOnce(name, writer);
                } catch (NoSuchFileException e) {
                    if (attempt == SAVE_ATTEMPTS) {
                        throw ArtifactStoreFiles.failure("save", name, e);
                    }
                }
            }
        } catch (ArtifactStreams.SourceFailure e) {
            throw new UncheckedIOException((IOException) e.getCause());
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("save", name, e);
        } finally {
            lock.unlock();
        }
    }

    /** Writes a version's bytes into the temporary file and returns its metadata. */
    interface ContentWriter {
        byte[] write(FileChannel ch) throws IOException;
    }

    private ArtifactRef saveOnce(String name, ContentWriter writer) throws IOException {
        Path dir = files.versionsDir(name, true);
        Path temp = dir.resolve(TEMP_PREFIX + UUID.randomUUID());
        boolean published = false;
        try {
            byte[] meta;
            try (FileChannel ch = FileChannel.open(temp,
                    EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), files.fileAttributes())) {
                meta = writer.write(ch);
                ch.force(true);
            }
            int version = claimVersion(dir, name, meta);
            // The claim makes this instance the only writer of this number, so the rename cannot replace a
            // version; rename is what makes the bytes visible all at once. When it fails the number stays claimed
            // and is skipped (as after a crash): giving it back would leave a hole below later claims, and the
            // hint relies on claims being consecutive.
            Files.move(temp, dir.resolve(ArtifactVersions.contentFile(version)), StandardCopyOption.ATOMIC_MOVE);
            published = true;
            LatestVersionPointer.write(dir, version, files.fileAttributes());
            ArtifactStoreFiles.syncDirectory(dir); // one sync for the content's rename, the claim and the hint
            return new ArtifactRef(name, version);
        } finally {
            if (!published) {
                Files.deleteIfExists(temp);
            }
        }
    }

    /**
     * Claims the next free version number by creating its metadata file with CREATE_NEW, which the file system
     * grants to exactly one creator, even across processes. The metadata is complete before the bytes become
     * visible, so a reader that sees a version also sees its metadata.
     *
     * <p>The search starts above the latest hint when it is valid, or above the highest number in a listing when it
     * is not; a hint that lags only costs one failed create per number it lags, and after {@link #PROBE_BUDGET} of
     * them the directory is listed once to jump to the top.
     */
    private int claimVersion(Path dir, String name, byte[] meta) throws IOException {
        int hint = LatestVersionPointer.read(dir);
        int version = (hint > 0 ? hint : ArtifactVersions.highestNumber(dir)) + 1;
        int taken = 0;
        while (true) {
            if (version <= 0) { // overflowed past Integer.MAX_VALUE
                throw new IllegalStateException("artifact '" + name + "' has reached the highest version number");
            }
            try (FileChannel ch = FileChannel.open(dir.resolve(ArtifactVersions.metaFile(version)),
                    EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), files.fileAttributes())) {
                ArtifactStoreFiles.writeFully(ch, meta);
                ch.force(true);
                return version;
            } catch (FileAlreadyExistsException e) {
                version++; // another instance or process got there first, or the hint lags
                if (++taken % PROBE_BUDGET == 0) {
                    version = Math.max(version, ArtifactVersions.highestNumber(dir) + 1);
                }
            }
        }
    }

    @Override
    public Optional<Artifact> load(String name) {
        ArtifactNames.validate(name);
        try {
            Path dir = files.versionsDir(name, false);
            if (dir == null) {
                return Optional.empty();
            }
            Optional<Artifact> fromHint = latestFromHint(dir, name);
            if (fromHint != null) {
                return fromHint;
            }
            List<Integer> versions = ArtifactVersions.listVersions(dir);
            if (!versions.isEmpty()) {
                // Repair the hint so the next load does not list again; a save overwrites it anyway.
                LatestVersionPointer.write(dir, versions.get(versions.size() - 1), files.fileAttributes());
            }
            // Newest first; a version deleted between the listing and the read is skipped.
            for (int i = versions.size() - 1; i >= 0; i--) {
                Artifact a = ArtifactVersions.read(dir, name, versions.get(i));
                if (a != null) {
                    return Optional.of(a);
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("load", name, e);
        }
    }

    /**
     * The latest version found from the hint without listing the directory: up from the hint to the top claim,
     * then down past claims whose bytes are not (yet) there. Claims are consecutive, so nothing visible lies above
     * the first number with no claim. Null when the hint is unusable or a probe ran out of budget: list instead.
     */
    private static Optional<Artifact> latestFromHint(Path dir, String name) throws IOException {
        int top = LatestVersionPointer.read(dir);
        if (top == 0) {
            return null;
        }
        for (int probes = 0; top < Integer.MAX_VALUE && claimed(dir, top + 1); top++) {
            if (++probes > PROBE_BUDGET) {
                return null;
            }
        }
        for (int v = top; v >= 1 && v > top - PROBE_BUDGET; v--) {
            Artifact a = ArtifactVersions.read(dir, name, v);
            if (a != null) {
                return Optional.of(a);
            }
        }
        return top <= PROBE_BUDGET ? Optional.empty() : null;
    }

    private static boolean claimed(Path dir, int version) throws IOException {
        return ArtifactVersions.attributes(dir.resolve(ArtifactVersions.metaFile(version))) != null;
    }

    @Override
    public Artifact load(String name, int version) {
        ArtifactNames.validate(name);
        try {
            Path dir = files.versionsDir(name, false);
            Artifact a = dir == null || version < 1 ? null : ArtifactVersions.read(dir, name, version);
            if (a == null) {
                throw ArtifactNotFoundException.forVersion(name, version,
                        dir == null ? List.of() : ArtifactVersions.listVersions(dir));
            }
            return a;
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("load", name, e);
        }
    }

    @Override
    public List<Integer> versions(String name) {
        ArtifactNames.validate(name);
        try {
            Path dir = files.versionsDir(name, false);
            return dir == null ? List.of() : ArtifactVersions.listVersions(dir);
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("list versions of", name, e);
        }
    }

    @Override
    public List<String> names() {
        List<String> names = new ArrayList<>();
        try {
            // walkFileTree does not follow links by default: a linked directory is reported as a file and skipped.
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    if (dir.equals(root)) {
                        return FileVisitResult.CONTINUE;
                    }
                    String leaf = dir.getFileName().toString();
                    if (leaf.equals(VERSIONS_DIR)) {
                        String name = files.nameOf(dir.getParent());
                        if (name != null && !ArtifactVersions.listVersions(dir).isEmpty()) {
                            names.add(name);
                        }
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    // A directory whose name is not a valid segment (e.g. lost+found) cannot hold a name.
                    return ArtifactNames.isValid(leaf) ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE; // removed meanwhile, or unreadable: not a name we can serve
                }
            });
        } catch (IOException e) {
            throw new BackendUnavailableException("artifact store could not list names: "
                    + ArtifactStoreFiles.reason(e), e);
        }
        names.sort(null);
        return List.copyOf(names);
    }

    @Override
    public void delete(String name) {
        ArtifactNames.validate(name);
        ReentrantLock lock = lockFor(name);
        lock.lock();
        try {
            Path dir = files.versionsDir(name, false);
            if (dir == null) {
                return;
            }
            List<Path> contents = new ArrayList<>();
            List<Path> others = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path p : entries) {
                    (ArtifactVersions.isContentFile(p.getFileName().toString()) ? contents : others).add(p);
                }
            }
            // Bytes first: a version disappears as soon as its content file does, so a reader never sees a
            // version whose metadata is already gone. Files.delete removes a link itself, never its target.
            for (Path p : contents) {
                Files.deleteIfExists(p);
            }
            for (Path p : others) {
                try {
                    Files.deleteIfExists(p);
                } catch (DirectoryNotEmptyException e) {
                    // Not ours (nothing here creates directories); leave it rather than recurse into it.
                }
            }
            removeEmptyDirectories(dir);
        } catch (IOException e) {
            throw ArtifactStoreFiles.failure("delete", name, e);
        } finally {
            lock.unlock();
        }
    }

    /** Removes {@code dir} and then its parents up to (not including) the root, stopping at the first non-empty. */
    private void removeEmptyDirectories(Path dir) throws IOException {
        for (Path p = dir; p != null && !p.equals(root) && p.startsWith(root); p = p.getParent()) {
            try {
                Files.deleteIfExists(p);
            } catch (DirectoryNotEmptyException e) {
                return; // other names live below it, or another process is saving into it
            }
        }
    }

    /**
     * The root directory, as a real path (links resolved), so that a sandbox can hide it. <b>Warning</b>: a host path;
     * never show it to a model.
     */
    public Path root() {
        return root;
    }

    @Override
    public String toString() {
        return "FileSystemArtifactService"; // no root path: this string may reach logs a model reads
    }

    private ReentrantLock lockFor(String name) {
        return locks[Math.floorMod(name.hashCode(), locks.length)];
    }
}
