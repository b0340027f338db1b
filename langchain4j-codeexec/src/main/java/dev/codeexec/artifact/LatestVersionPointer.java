package dev.codeexec.artifact;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.util.EnumSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code latest} file in a name's version directory: a hint holding a version number near the top, so that a
 * save and a load of the latest version start there instead of listing every version.
 *
 * <p>It is only a hint, never the truth. Version numbers are claimed consecutively (a claim is the metadata file,
 * created exclusively, and is never removed except by deleting the whole name), so the claims of a name are
 * {@code 1..top} and any claimed number is a safe place to start: the top is found by probing upwards from it.
 * The hint can therefore lag (a writer crashed before updating it, or two processes wrote it in the wrong order)
 * without harm. What it must never do is point <em>above</em> the top, which would make a save skip numbers; so a
 * hint is used only when it parses exactly and the metadata file of the version it names exists, and otherwise
 * the caller falls back to a listing and rewrites it.
 *
 * <p>Format: the decimal number and a newline, nothing else; a torn or truncated write (no newline), an empty or
 * oversized file, a link in its place or any other text is rejected. It is replaced by an atomic rename of a
 * temporary file and not forced to disk: after a power loss it may be stale or empty, which the checks above catch.
 */
final class LatestVersionPointer {

    /** The hint's file name in a version directory; never matches a version file. */
    static final String FILE = "latest";

    /** Longest valid content: ten digits and a newline. Anything longer is not read, only refused. */
    private static final int MAX_BYTES = 11;
    private static final Pattern FORMAT = Pattern.compile("([1-9][0-9]{0,9})\n");

    private LatestVersionPointer() {
    }

    /**
     * The number the hint names, when it is well formed and names a claimed version; otherwise 0, meaning
     * "unknown: list the directory". Never throws for a damaged hint; only for a directory that cannot be read.
     */
    static int read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        BasicFileAttributes attrs = ArtifactVersions.attributes(file);
        if (attrs == null || !attrs.isRegularFile()) {
            return 0; // missing, or something else in its place (a FIFO would block the read)
        }
        byte[] bytes;
        // NOFOLLOW_LINKS makes the open fail on a planted link instead of reading its target.
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (IOException e) {
            return 0; // vanished or replaced since the check, unreadable: no hint
        }
        if (bytes.length > MAX_BYTES) {
            return 0;
        }
        Matcher m = FORMAT.matcher(new String(bytes, StandardCharsets.US_ASCII));
        if (!m.matches()) {
            return 0;
        }
        long n = Long.parseLong(m.group(1));
        if (n > Integer.MAX_VALUE) {
            return 0;
        }
        int version = (int) n;
        BasicFileAttributes claim = ArtifactVersions.attributes(dir.resolve(ArtifactVersions.metaFile(version)));
        return claim != null && claim.isRegularFile() ? version : 0;
    }

    /**
     * Points the hint at {@code version}, which must be claimed. Best effort: the version is already saved, and a
     * hint that could not be written only makes the next access list the directory, so failures are swallowed.
     */
    static void write(Path dir, int version, FileAttribute<?>[] fileAttributes) {
        Path temp = dir.resolve(FileSystemArtifactService.TEMP_PREFIX + FILE + "-" + UUID.randomUUID());
        try {
            try (FileChannel ch = FileChannel.open(temp,
                    EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), fileAttributes)) {
                ArtifactStoreFiles.writeFully(ch, (version + "\n").getBytes(StandardCharsets.US_ASCII));
            }
            // rename(2) replaces the old hint (or a link planted in its place, never the link's target) at once.
            Files.move(temp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // A leftover temporary file is ignored by every reader and removed by delete.
            }
        }
    }
}
