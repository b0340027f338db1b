package dev.codeexec.workspace.spi;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.Objects;
import java.util.Optional;

/** {@link ImportSource#ofHostPath}: a host tree walked without following links. */
final class HostTreeSource implements ImportSource {

    private final Path root;

    HostTreeSource(Path realPath) {
        Objects.requireNonNull(realPath, "realPath");
        if (!realPath.isAbsolute()) {
            throw new IllegalArgumentException("realPath must be absolute");
        }
        this.root = realPath;
    }

    @Override
    public Optional<Path> hostPath() {
        return Optional.of(root);
    }

    @Override
    public long sizeBytes() {
        try {
            if (Files.isRegularFile(root, LinkOption.NOFOLLOW_LINKS)) {
                return Files.size(root);
            }
            long[] sum = {0};
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
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

    @Override
    public void forEach(Visitor visitor) throws IOException {
        // walkFileTree does not follow links: a link (the root included) reaches visitFile as a link and is skipped.
        // A directory that cannot be read fails the walk, so an import is never silently partial.
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                visitor.directory(entry(dir, attrs));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile()) {
                    // NOFOLLOW_LINKS: a file swapped for a link since the directory was read is refused, not read
                    // through.
                    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
                        visitor.file(entry(file, attrs), in);
                    }
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private FileEntry entry(Path p, BasicFileAttributes attrs) {
        String rel = root.relativize(p).toString().replace('\\', '/');
        return new FileEntry(rel.isEmpty() ? "." : rel, attrs.isDirectory() ? EntryType.DIRECTORY : EntryType.FILE,
                attrs.isDirectory() ? 0 : attrs.size(), mode(p, attrs),
                attrs.lastModifiedTime().toInstant());
    }

    /** Permission bits: a file walk reports basic attributes only, so POSIX ones are read for the entry itself. */
    private static int mode(Path p, BasicFileAttributes attrs) {
        if (attrs instanceof PosixFileAttributes posix) {
            return FileEntry.modeOf(posix.permissions());
        }
        try {
            return FileEntry.modeOf(Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                    .permissions());
        } catch (UnsupportedOperationException | IOException e) {
            return 0;
        }
    }

    @Override
    public String toString() {
        return "ImportSource{host tree}";
    }
}
