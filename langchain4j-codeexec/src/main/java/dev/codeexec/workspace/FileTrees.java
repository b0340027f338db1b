package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/**
 * Host file-tree helpers that never follow symbolic links: the one tree deletion of the host-directory backends, and
 * the modes of what they write. Trees are copied in through {@link dev.codeexec.workspace.spi.ImportSource}.
 */
public final class FileTrees {

    private FileTrees() {
    }

    /**
     * Deletes a file or directory tree; links are deleted, never followed; directories a program made read-only or
     * unreadable are opened up first. A missing path does nothing.
     *
     * @throws CodeExecException when something cannot be deleted (the message names only the tree's last segment)
     */
    public static void deleteTree(Path path) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(path, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    // Read-only staged directories must become writable to be emptied.
                    makeOwnerWritable(dir);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                    if (exc instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    if (exc instanceof java.nio.file.AccessDeniedException
                            && Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
                        // A program made a directory unreadable (chmod 000): a non-root owner can open it only
                        // after giving the permissions back.
                        makeOwnerWritable(file);
                        deleteTree(file);
                        return FileVisitResult.CONTINUE;
                    }
                    throw exc;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new CodeExecException("could not delete '" + path.getFileName() + "': "
                    + e.getClass().getSimpleName(), e);
        }
    }

    /** Removes write permission from a tree (files and directories). */
    static void makeReadOnly(Path path) throws IOException {
        Files.walkFileTree(path, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                dropWrite(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                dropWrite(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    static void restrictToOwner(Path dir) {
        try {
            Files.setPosixFilePermissions(dir, EnumSet.of(PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE));
        } catch (UnsupportedOperationException | IOException ignored) {
            // Not a POSIX file system: permissions are the platform's default.
        }
    }

    /** Sets Unix permission bits (0644 and the like); ignored on non-POSIX file systems. */
    static void setMode(Path file, int mode) throws IOException {
        try {
            Files.setPosixFilePermissions(file, permissions(mode));
        } catch (UnsupportedOperationException ignored) {
            // Not a POSIX file system.
        }
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> s = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
        for (int i = 0; i < order.length; i++) {
            if ((mode & (1 << i)) != 0) {
                s.add(order[i]);
            }
        }
        return s;
    }

    private static void dropWrite(Path p) throws IOException {
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
            perms.remove(PosixFilePermission.OWNER_WRITE);
            perms.remove(PosixFilePermission.GROUP_WRITE);
            perms.remove(PosixFilePermission.OTHERS_WRITE);
            Files.setPosixFilePermissions(p, perms);
        } catch (UnsupportedOperationException ignored) {
            // Not a POSIX file system.
        }
    }

    private static void makeOwnerWritable(Path dir) throws IOException {
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
            if (perms.add(PosixFilePermission.OWNER_READ) | perms.add(PosixFilePermission.OWNER_WRITE)
                    | perms.add(PosixFilePermission.OWNER_EXECUTE)) {
                Files.setPosixFilePermissions(dir, perms);
            }
        } catch (UnsupportedOperationException ignored) {
            // Not a POSIX file system.
        }
    }
}
