package dev.codeexec.artifact;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PathEscapeException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * The file-system side of {@link FileSystemArtifactService}: the checked walk from the root to a name's directories
 * (no component a link, the real path the lexical one), private permissions, durable writes, and failure messages
 * without host paths. The service decides versions, hints and locking on top of it.
 */
final class ArtifactStoreFiles {

    private final Path root;
    private final boolean posix;

    ArtifactStoreFiles(Path realRoot, boolean posix) {
        this.root = realRoot;
        this.posix = posix;
    }

    // ---------------------------------------------------------------- paths

    /**
     * The name's version directory, walked one component at a time from the root. No component may be a symbolic
     * link, and the real path of the result must equal the lexical one: that also catches a case-insensitive file
     * system folding {@code Report.md} onto an existing {@code report.md} where the platform reports stored case.
     *
     * @param create make missing directories; when false, return null as soon as one is missing
     * @throws PathEscapeException when a component is a link or the real path differs; nothing was created
     */
    Path versionsDir(String name, boolean create) throws IOException {
        List<String> parts = new ArrayList<>(ArtifactNames.segments(name));
        parts.add(FileSystemArtifactService.VERSIONS_DIR);
        Path dir = root;
        for (String part : parts) {
            Path next = dir.resolve(part);
            BasicFileAttributes attrs = ArtifactVersions.attributes(next);
            if (attrs == null) {
                if (!create) {
                    return null;
                }
                try {
                    if (posix) {
                        Files.createDirectory(next, privateDirectory());
                    } else {
                        Files.createDirectory(next);
                    }
                    syncDirectory(dir);
                } catch (FileAlreadyExistsException raced) {
                    // Created concurrently (or a link was planted meanwhile): the checks below decide.
                }
                attrs = ArtifactVersions.attributes(next);
                if (attrs == null) {
                    throw new NoSuchFileException(part); // removed again by a concurrent delete; save retries
                }
            }
            if (attrs.isSymbolicLink()) {
                throw escape(name);
            }
            if (!attrs.isDirectory()) {
                throw new BackendUnavailableException("artifact store is damaged: a file stands where artifact '"
                        + name + "' needs a directory; remove it or choose another name");
            }
            dir = next;
        }
        if (!dir.toRealPath().equals(dir)) {
            throw escape(name);
        }
        return dir;
    }

    /** The artifact name of a name directory, or null when it is not a valid name (it holds nothing we serve). */
    String nameOf(Path nameDir) {
        Path rel = root.relativize(nameDir);
        if (rel.getNameCount() == 0 || rel.toString().isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (Path part : rel) {
            if (sb.length() > 0) {
                sb.append('/');
            }
            sb.append(part);
        }
        String name = sb.toString();
        return ArtifactNames.isValid(name) ? name : null;
    }

    private static PathEscapeException escape(String name) {
        return new PathEscapeException("artifact '" + name + "' resolves through a symbolic link or onto another "
                + "name's directory in the artifact store; refused, nothing was read or written");
    }

    // ---------------------------------------------------------------- plumbing


    FileAttribute<?>[] fileAttributes() {
        return posix
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
                : new FileAttribute<?>[0];
    }

    static FileAttribute<?> privateDirectory() {
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    }

    /** A new temporary file of the platform's temporary directory, readable by its owner only where POSIX. */
    static Path privateTempFile() throws IOException {
        boolean posixTemp = java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
        return posixTemp
                ? Files.createTempFile("codeexec-artifact-", ".part",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
                : Files.createTempFile("codeexec-artifact-", ".part");
    }

    /** Deletes a file if there is one, ignoring failures: for temporary files on the way out of a failure. */
    static void deleteQuietly(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // left for the platform's temporary-file cleaning; the failure that matters is already on its way
            }
        }
    }

    static void writeFully(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
    }

    /**
     * Forces a directory's entries to disk so that a rename or a new file survives a power loss. Best effort:
     * some platforms cannot open a directory for this, and the data itself is already forced.
     */
    static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Not supported here (for example on Windows); the rename is still atomic, only less durable.
        }
    }

    static BackendUnavailableException failure(String action, String name, IOException e) {
        return new BackendUnavailableException("artifact store could not " + action + " '" + name + "': "
                + reason(e), e);
    }

    /** A cause for a message without the host path an IOException's own message carries. */
    static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof ClosedByInterruptException) {
            return "the thread was interrupted";
        }
        if (e instanceof NoSuchFileException) {
            return "a file or directory vanished (deleted concurrently?)";
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason();
        }
        return e.getClass().getSimpleName();
    }
}
