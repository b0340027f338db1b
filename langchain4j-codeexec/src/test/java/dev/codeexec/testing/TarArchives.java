package dev.codeexec.testing;

import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Tar archives for the tests of backends that move files as tar (the core's {@code CheckedTar}, the container's
 * archive endpoints, a pod's {@code tar} over exec): archives as a hostile remote side could send them, names on the
 * wire exactly as given (absolute names and {@code ..} included), and a one-line description of each entry of an
 * archive a backend built. One copy for every module's tests.
 */
public final class TarArchives {

    private TarArchives() {
    }

    /** An entry and its content. */
    public record Item(TarArchiveEntry entry, byte[] content) {
    }

    /**
     * An entry named {@code name} exactly: {@code preserveAbsolutePath}, so the name goes on the wire as given, as a
     * hostile remote side could send it.
     */
    public static TarArchiveEntry entry(String name, byte flag) {
        return new TarArchiveEntry(name, flag, true);
    }

    /** A directory entry ({@code name} as given, usually ending in {@code /}). */
    public static Item dir(String name) {
        return new Item(entry(name, TarConstants.LF_DIR), new byte[0]);
    }

    /** A regular file holding {@code content} in UTF-8. */
    public static Item file(String name, String content) {
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        TarArchiveEntry e = entry(name, TarConstants.LF_NORMAL);
        e.setSize(bytes.length);
        return new Item(e, bytes);
    }

    /** A symbolic link to {@code target}. */
    public static Item link(String name, String target) {
        TarArchiveEntry e = entry(name, TarConstants.LF_SYMLINK);
        e.setLinkName(target);
        return new Item(e, new byte[0]);
    }

    /** A tar archive of the items, in order, names as given (long names as PAX headers). */
    public static byte[] archive(Item... items) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(bytes)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (Item item : items) {
                tar.putArchiveEntry(item.entry());
                tar.write(item.content());
                tar.closeArchiveEntry();
            }
            tar.finish();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * A visitor for {@code CheckedTar.read} that adds each entry to {@code seen} as {@code "rel TYPE"}, a file's as
     * {@code "rel FILE content"} (its content read as UTF-8).
     */
    public static CheckedTar.EntryVisitor describing(List<String> seen) {
        return (e, in) -> {
            seen.add(e.rel() + " " + e.type() + (e.type() == EntryType.FILE
                    ? " " + new String(in.readAllBytes(), StandardCharsets.UTF_8) : ""));
            return true;
        };
    }

    /** Each entry of {@code tar} as {@code "name uid:gid octal-mode size"}, in order. */
    public static List<String> entries(byte[] tar) {
        List<String> entries = new ArrayList<>();
        try (TarArchiveInputStream in = new TarArchiveInputStream(new ByteArrayInputStream(tar))) {
            TarArchiveEntry e;
            while ((e = in.getNextEntry()) != null) {
                entries.add(e.getName() + " " + e.getLongUserId() + ":" + e.getLongGroupId() + " "
                        + Integer.toOctalString(e.getMode()) + " " + e.getSize());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return entries;
    }
}
