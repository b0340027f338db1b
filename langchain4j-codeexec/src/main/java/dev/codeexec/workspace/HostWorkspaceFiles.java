package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * {@link WorkspaceFiles} of a workspace that is a host directory (the local and sandbox backends). Every user path
 * goes through the one {@link PathResolver}, which checks links against the real file system at use time; this class
 * only performs the operation on the host path it returns, opening last components with {@code NOFOLLOW_LINKS} and
 * renaming temporary files into place. Not API: {@link HostWorkspaceFS} is this composed with the file rules.
 */
final class HostWorkspaceFiles implements WorkspaceFiles {

    private final PathResolver resolver;

    /** The files of the workspace {@code resolver} was opened on (it checked that the workspace exists). */
    HostWorkspaceFiles(PathResolver resolver) {
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    @Override
    public String resolve(String path) {
        return resolver.relativize(resolver.resolve(path));
    }

    @Override
    public Optional<FileEntry> stat(String path) {
        String norm = PathResolver.normalize(path);
        Path p = norm.equals(".") ? resolver.root() : resolver.resolveEntry(norm);
        BasicFileAttributes attrs = lstat(p);
        return attrs == null ? Optional.empty() : Optional.of(entry(norm, attrs));
    }

    @Override
    public void walk(String dir, WalkVisitor visitor) {
        String norm = PathResolver.normalize(dir);
        Path start = resolver.resolve(norm);
        if (!Files.isDirectory(start, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> top = Files.newDirectoryStream(start)) {
            walk(top, norm.equals(".") ? "" : norm + "/", visitor);
        } catch (IOException e) {
            // An unreadable directory holds nothing to list, the one walked included.
        } catch (DirectoryIteratorException e) {
            throw new CodeExecException("cannot list the workspace: " + e.getCause().getClass().getSimpleName(), e);
        }
    }

    /**
     * Depth first, pre-order. A directory is reported only once it has been opened (an unreadable one is left out),
     * and on a secure directory stream (Linux) it is opened relative to its parent without following a link, so a
     * directory swapped for a link after its attributes were read is not listed through.
     *
     * @return false when the visitor stopped the walk
     */
    private static boolean walk(DirectoryStream<Path> dir, String prefix, WalkVisitor visitor) {
        for (Path child : dir) {
            Path name = child.getFileName();
            BasicFileAttributes attrs = attributes(dir, child);
            if (attrs == null) {
                continue; // gone since the directory was read, or unreadable
            }
            FileEntry e = entry(prefix + name, attrs);
            if (!attrs.isDirectory()) {
                if (visitor.visit(e) == WalkAction.STOP) {
                    return false;
                }
                continue;
            }
            DirectoryStream<Path> sub;
            try {
                sub = dir instanceof SecureDirectoryStream<Path> secure
                        ? secure.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS) : Files.newDirectoryStream(child);
            } catch (IOException e2) {
                continue;
            }
            try (sub) {
                WalkAction action = visitor.visit(e);
                if (action == WalkAction.STOP || action == WalkAction.CONTINUE && !walk(sub, e.path() + "/", visitor)) {
                    return false;
                }
            } catch (IOException e2) {
                // Closing a directory stream: nothing to recover.
            }
        }
        return true;
    }

    /** The attributes of a directory entry itself (POSIX where available), or null when it cannot be read. */
    private static BasicFileAttributes attributes(DirectoryStream<Path> dir, Path child) {
        try {
            if (dir instanceof SecureDirectoryStream<Path> secure) {
                return secure.getFileAttributeView(child.getFileName(), PosixFileAttributeView.class,
                        LinkOption.NOFOLLOW_LINKS).readAttributes();
            }
        } catch (IOException e) {
            return null;
        } catch (UnsupportedOperationException e) {
            // Fall back to the path's own attributes below.
        }
        return lstat(child);
    }

    @Override
    public FileWindow read(String path, long offset, int maxBytes) {
        if (offset < 0) {
            throw new InvalidSpecException("offset (" + offset + ") must not be negative");
        }
        if (maxBytes < 0) {
            throw new InvalidSpecException("maxBytes (" + maxBytes + ") must not be negative");
        }
        String norm = PathResolver.normalize(path);
        Path p = regularFile(norm);
        try (SeekableByteChannel ch = open(p)) {
            long size = ch.size();
            long start = Math.min(offset, size);
            int len = (int) Math.min(maxBytes, size - start);
            ByteBuffer buf = ByteBuffer.allocate(len);
            ch.position(start);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // Keep reading until the window is full or the file ends.
            }
            byte[] content = buf.position() < len ? Arrays.copyOf(buf.array(), buf.position()) : buf.array();
            return new FileWindow(content, size);
        } catch (IOException e) {
            throw cannotRead(norm, e);
        }
    }

    @Override
    public void export(List<String> paths, ExportVisitor visitor) {
        for (String path : paths) {
            String norm = PathResolver.normalize(path);
            Path p = regularFile(norm);
            try (SeekableByteChannel ch = open(p); InputStream in = Channels.newInputStream(ch)) {
                if (!visitor.file(path, ch.size(), in)) {
                    return;
                }
            } catch (IOException e) {
                throw cannotRead(norm, e);
            }
        }
    }

    @Override
    public void write(String path, byte[] content, int mode) {
        Path target = resolver.resolveForWrite(path);
        WorkspaceSpace.requireRoom(resolver.root(), content.length);
        Path tmp = null;
        try {
            tmp = Files.createTempFile(target.getParent(), WRITE_TEMP_PREFIX, ".tmp");
            Files.write(tmp, content);
            FileTrees.setMode(tmp, mode);
            // A rename replaces a link at the target instead of writing through it.
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
        } catch (IOException e) {
            if (WorkspaceSpace.isOutOfSpace(e)) {
                throw WorkspaceSpace.full(resolver.root(), e);
            }
            throw new CodeExecException("could not write '" + PathResolver.normalize(path) + "': "
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

    @Override
    public void mkdirs(String path) {
        resolver.ensureDirectory(path);
    }

    @Override
    public void delete(String path) {
        String norm = PathResolver.normalize(path);
        if (norm.equals(".")) {
            throw new InvalidSpecException("refusing to delete the workspace root; use the engine's cleanup");
        }
        // The last component itself is not followed: deleting a link deletes the link.
        FileTrees.deleteTree(resolver.resolveEntry(norm));
    }

    /** Builds the tree in a hidden temporary sibling, then renames it into place, so a failure leaves nothing. */
    @Override
    public void importTree(ImportSource source, String to, boolean readOnly) {
        String norm = PathResolver.normalize(to);
        if (norm.equals(".")) {
            throw new InvalidSpecException("cannot stage onto the workspace root itself; name a destination");
        }
        // Not resolveForWrite: an existing directory at the destination is replaced (restaging a skill, say).
        Path target = resolver.resolveEntryForWrite(norm);
        Optional<Path> hostSource = source.hostPath();
        if (hostSource.isPresent() && target.toAbsolutePath().normalize().startsWith(hostSource.get())) {
            // A tree copied into itself would grow until a path got too long.
            throw new InvalidSpecException("cannot stage into '" + norm + "': it lies inside the source being copied");
        }
        Path tmp = target.resolveSibling(IMPORT_TEMP_PREFIX + Long.toHexString(System.nanoTime()) + "-"
                + target.getFileName());
        try {
            source.forEach(new ImportSource.Visitor() {
                @Override
                public void directory(FileEntry dir) throws IOException {
                    Files.createDirectories(inside(tmp, dir.path()));
                }

                @Override
                public void file(FileEntry file, InputStream content) throws IOException {
                    Path t = inside(tmp, file.path());
                    Files.copy(content, t);
                    FileTrees.setMode(t, file.mode());
                    Files.getFileAttributeView(t, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                            .setTimes(FileTime.from(file.modifiedTime()), null, null);
                }
            });
            if (readOnly) {
                FileTrees.makeReadOnly(tmp);
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                FileTrees.deleteTree(target);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            FileTrees.deleteTree(tmp);
            if (WorkspaceSpace.isOutOfSpace(e)) {
                throw WorkspaceSpace.full(resolver.root(), e);
            }
            throw new CodeExecException("could not stage into '" + norm + "': " + e.getClass().getSimpleName(), e);
        } catch (RuntimeException e) {
            FileTrees.deleteTree(tmp);
            throw e;
        }
    }

    /**
     * The host path of a source entry inside the temporary tree. The core's sources yield normalised relative paths;
     * one that is not (an absolute name, {@code ..}) is refused rather than joined.
     */
    private static Path inside(Path tmp, String relative) {
        if (relative.equals(".")) {
            return tmp;
        }
        for (String part : relative.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..") || part.indexOf('\\') >= 0
                    || part.indexOf('\0') >= 0) {
                throw new PathEscapeException("an entry of the source being staged has an unsafe name");
            }
        }
        return tmp.resolve(relative);
    }

    /** The resolved host path of an existing regular file; links inside the workspace are followed. */
    private Path regularFile(String norm) {
        Path p = resolver.resolve(norm);
        BasicFileAttributes attrs = lstat(p);
        if (attrs != null && !attrs.isRegularFile()) {
            // Opening a FIFO would block until a writer appears; devices and sockets are not files to read either.
            throw new InvalidSpecException("'" + norm + "' is "
                    + (attrs.isDirectory() ? "a directory" : "not a regular file"));
        }
        // A missing file fails when it is opened, with the same message as any other read failure.
        return p;
    }

    /** Opens without following a link at the last component: a link swapped in after the checks is refused. */
    private static SeekableByteChannel open(Path p) throws IOException {
        return Files.newByteChannel(p, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
    }

    private static InvalidSpecException cannotRead(String norm, IOException e) {
        return new InvalidSpecException("cannot read '" + norm + "': " + e.getClass().getSimpleName());
    }

    /** The attributes of a path itself, not following a link (POSIX where available), or null when none. */
    private static BasicFileAttributes lstat(Path p) {
        try {
            return Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException e) {
            try {
                return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e2) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
    }

    /** An entry from attributes read without following links ({@link #lstat}, {@link #attributes}). */
    private static FileEntry entry(String path, BasicFileAttributes attrs) {
        EntryType type = attrs.isSymbolicLink() ? EntryType.LINK : attrs.isDirectory() ? EntryType.DIRECTORY
                : attrs.isRegularFile() ? EntryType.FILE : EntryType.OTHER;
        int mode = attrs instanceof PosixFileAttributes posix ? FileEntry.modeOf(posix.permissions()) : 0;
        return new FileEntry(path, type, type == EntryType.DIRECTORY ? 0 : attrs.size(), mode,
                attrs.lastModifiedTime().toInstant());
    }
}
