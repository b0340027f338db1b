package dev.codeexec.workspace.spi;

import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * One entry of a workspace (or of an {@link ImportSource}), as seen without following a link at it.
 *
 * @param path         the normalised path of the entry: workspace-relative from {@link WorkspaceFiles#stat} and
 *                     {@link WorkspaceFiles#walk}, relative to the source root ({@code "."} for the root itself) in an
 *                     {@link ImportSource}
 * @param type         what the entry is
 * @param size         the size in bytes of a {@link EntryType#FILE}; for other types whatever the backend reports
 *                     (0 when it reports nothing), not used by the core
 * @param mode         Unix permission bits ({@code 0644}, {@code 0755}); 0 on a backend without Unix modes
 * @param modifiedTime the last modification time; {@link Instant#EPOCH} when the backend does not know it
 */
public record FileEntry(String path, EntryType type, long size, int mode, Instant modifiedTime) {

    public FileEntry {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(modifiedTime, "modifiedTime");
        if (size < 0) {
            throw new IllegalArgumentException("size (" + size + ") must not be negative");
        }
        if (mode < 0 || mode > 07777) {
            throw new IllegalArgumentException("mode (" + Integer.toOctalString(mode) + ") must be within 0..07777");
        }
    }

    /**
     * The Unix permission bits of a set of POSIX permissions ({@code rwxr-x---} is {@code 0750}), for providers that
     * read them from a Java file system.
     */
    public static int modeOf(Set<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission p : permissions) {
            // OWNER_READ (ordinal 0) is 0400, OTHERS_EXECUTE (ordinal 8) is 0001.
            mode |= 1 << (8 - p.ordinal());
        }
        return mode;
    }

    /** True for a {@link EntryType#DIRECTORY}. */
    public boolean isDirectory() {
        return type == EntryType.DIRECTORY;
    }

    /** True for a regular {@link EntryType#FILE}. */
    public boolean isFile() {
        return type == EntryType.FILE;
    }

    /** The last segment of the path ({@code "."} for a root). */
    public String name() {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** A copy at another path (an entry of a tree re-based onto an import root, for example). */
    public FileEntry withPath(String newPath) {
        return new FileEntry(newPath, type, size, mode, modifiedTime);
    }

    @Override
    public String toString() {
        return "FileEntry{" + path + ", " + type + ", size=" + size + ", mode=" + Integer.toOctalString(mode)
                + ", modified=" + modifiedTime + "}";
    }
}
