package dev.codeexec.artifact;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Durable, versioned files that outlive workspaces. Each save of a name creates the next version (1, 2, ...); a
 * saved version never changes. A workspace is a scratch area that may be reaped; what must survive it is saved
 * here and referred to as {@code artifact://name@version} (see {@link ArtifactRef}).
 *
 * <p><b>Names</b> are relative, {@code /}-separated paths of safe segments ({@code [A-Za-z0-9._-]}, no empty,
 * {@code .} or {@code ..} segment, at most 255 characters), for example {@code report.md} or
 * {@code reports/q1.md}. Every method refuses any other name, including null, with an
 * {@link IllegalArgumentException} that quotes the bad name, before it touches storage.
 *
 * <p><b>Thread safety</b>: implementations are thread-safe; concurrent saves of one name get distinct, gap-free
 * versions (gaps appear only after a crash or a failed save). Versions are numbered from the highest existing one,
 * so after {@link #delete(String)} the next save of that name is version 1 again.
 *
 * <p><b>Failures</b>: a storage failure (disk full, permission denied) is a
 * {@link dev.codeexec.engine.BackendUnavailableException}; a store that finds a name leading out of its storage
 * (for example through a planted symbolic link) refuses with {@link dev.codeexec.engine.PathEscapeException}.
 * Messages never contain host paths.
 *
 * <p>Implementations here: {@link FileSystemArtifactService} (durable, the default) and
 * {@link InMemoryArtifactService} (tests and throw-away runs). To plug in another store (a database, an object
 * store), implement this interface and run the contract test {@code ArtifactServiceContractTest} from this
 * module's test jar against it.
 */
public interface ArtifactService {

    /**
     * Saves a new version and returns its reference.
     *
     * @param name     the artifact name (see the rules above)
     * @param content  the bytes; copied, so later changes to the array do not affect the stored version; empty is
     *                 allowed, null is not
     * @param mimeType the MIME type stored with the version; null or blank means {@code application/octet-stream};
     *                 must be printable ASCII of at most 255 characters
     * @return the exact reference of the new version, e.g. {@code artifact://report.md@3}
     * @throws IllegalArgumentException for a bad name or MIME type
     * @throws NullPointerException     when content is null
     */
    ArtifactRef save(String name, byte[] content, String mimeType);

    /**
     * Saves a new version from a stream, so that large files need not be held in memory. The stream is read to its
     * end; when reading it fails, no version is saved.
     *
     * <p>The default reads the stream into memory and calls {@link #save(String, byte[], String)};
     * {@link FileSystemArtifactService} streams it to disk.
     *
     * @param name     the artifact name (see the rules above)
     * @param content  the bytes; read to the end, not closed
     * @param mimeType as for {@link #save(String, byte[], String)}
     * @return the exact reference of the new version
     * @throws UncheckedIOException     when reading the stream failed (nothing was saved)
     * @throws IllegalArgumentException for a bad name or MIME type
     */
    default ArtifactRef saveStream(String name, InputStream content, String mimeType) {
        ArtifactNames.validate(name);
        byte[] bytes;
        try {
            bytes = content.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return save(name, bytes, mimeType);
    }

    /**
     * Saves a new version whose bytes {@code writer} pushes, streamed: the way to store something produced in one
     * pass from many sources without holding it in memory. When the writer throws, no version is saved.
     *
     * <p>The default has the writer fill a private temporary file and saves that with
     * {@link #saveStream(String, InputStream, String)}; {@link FileSystemArtifactService} writes straight into the
     * version's own temporary file, {@link InMemoryArtifactService} into memory.
     *
     * @param name     the artifact name (see the rules above)
     * @param writer   produces the bytes
     * @param mimeType as for {@link #save(String, byte[], String)}
     * @return the exact reference of the new version
     * @throws UncheckedIOException     when the writer failed with an {@link IOException} (nothing was saved); a
     *                                  runtime exception of the writer is passed on as it is
     * @throws IllegalArgumentException for a bad name or MIME type
     */
    default ArtifactRef saveWritten(String name, ArtifactWriter writer, String mimeType) {
        ArtifactNames.validate(name);
        ArtifactNames.mimeType(mimeType);
        java.util.Objects.requireNonNull(writer, "writer");
        Path temp = null;
        try {
            temp = ArtifactStoreFiles.privateTempFile();
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(temp))) {
                writer.write(out);
            }
            try (InputStream in = Files.newInputStream(temp)) {
                return saveStream(name, in, mimeType);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            ArtifactStoreFiles.deleteQuietly(temp);
        }
    }

    /**
     * Lends one version's bytes as a stream to {@code reader}, so that large versions need not be held in memory.
     *
     * <p>The default loads the version into memory; {@link FileSystemArtifactService} streams it from disk and fails
     * a read that reaches the end of damaged bytes.
     *
     * @param name    the artifact name
     * @param version the version number
     * @param reader  reads the stream; it is closed afterwards
     * @return what the reader returned
     * @throws ArtifactNotFoundException when that version does not exist
     * @throws UncheckedIOException      when the reader (or the store's read) failed
     * @throws IllegalArgumentException  for a bad name
     */
    default <T> T read(String name, int version, ArtifactReader<T> reader) {
        Artifact a = load(name, version);
        try (InputStream in = new ByteArrayInputStream(a.content())) {
            return reader.read(in, a.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads the latest version, or empty when the name has none.
     *
     * @param name the artifact name
     * @return the highest version, or empty when the name has no versions
     * @throws IllegalArgumentException for a bad name
     */
    Optional<Artifact> load(String name);

    /**
     * Loads one version.
     *
     * @param name    the artifact name
     * @param version the version number; 0 or less never exists
     * @return that version, with its bytes and MIME type
     * @throws ArtifactNotFoundException when that version does not exist (the message lists the versions that do)
     * @throws IllegalArgumentException  for a bad name
     */
    Artifact load(String name, int version);

    /**
     * Loads what a reference names: its version, or the latest when it has none.
     *
     * @param ref the reference, e.g. {@code ArtifactRef.parse("artifact://report.md@2")}
     * @return the version it names
     * @throws ArtifactNotFoundException when the name has no versions, or not the one asked for
     * @throws IllegalArgumentException  for a bad name
     */
    default Artifact load(ArtifactRef ref) {
        if (ref.version() != null) {
            return load(ref.name(), ref.version());
        }
        return load(ref.name()).orElseThrow(() -> new ArtifactNotFoundException(
                "artifact '" + ref.name() + "' does not exist"));
    }

    /**
     * The versions of a name.
     *
     * @param name the artifact name
     * @return its version numbers, ascending; empty when it has none
     * @throws IllegalArgumentException for a bad name
     */
    List<Integer> versions(String name);

    /**
     * The names that have at least one version.
     *
     * @return the names, sorted; nested names such as {@code reports/q1.md} included
     */
    List<String> names();

    /**
     * Deletes every version of a name. Deleting a missing name does nothing. References to the deleted versions
     * stop resolving; a later save starts again at version 1.
     *
     * @param name the artifact name
     * @throws IllegalArgumentException for a bad name
     */
    void delete(String name);
}
