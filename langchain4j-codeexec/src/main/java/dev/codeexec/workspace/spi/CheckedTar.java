package dev.codeexec.workspace.spi;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.Objects;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * Tar archives exchanged with a remote workspace (a container's archive API, a pod's {@code tar} over exec), with the
 * checks the library relies on written once. What comes from the remote side is untrusted: {@link #read} refuses an
 * entry with an absolute name, a {@code ..} segment or a name outside the one requested tree, and reports links as
 * links (their target as text), never following them. What goes to the remote side is built by {@link Writer}: every
 * name relative and inside its tree, every entry owned by the workspace's user, POSIX headers for long names and big
 * numbers (sizes past 8 GiB, ids past 2097151).
 *
 * <p>Stateless; a {@link Writer} is used by one thread.
 */
public final class CheckedTar {

    private CheckedTar() {
    }

    /**
     * An entry of an archive read from the remote side.
     *
     * @param rel        its name relative to the requested tree, {@code "."} for the requested path itself
     * @param type       what it is; a hard link, a device or a FIFO is {@link EntryType#OTHER}
     * @param size       the size of a {@link EntryType#FILE}'s content (0 for other types), never negative
     * @param mode       its Unix permission bits
     * @param mtime      its modification time
     * @param linkTarget for a {@link EntryType#LINK}, the target as the link holds it (not resolved); null otherwise
     */
    public record Entry(String rel, EntryType type, long size, int mode, Instant mtime, String linkTarget) {
    }

    /** Receives the entries of an archive, in archive order. */
    @FunctionalInterface
    public interface EntryVisitor {

        /**
         * @param content the entry's content (a {@link EntryType#FILE}'s bytes, empty otherwise); valid during the
         *                call only, and not to be closed
         * @return false to stop reading
         */
        boolean entry(Entry entry, InputStream content) throws IOException;
    }

    /**
     * Reads a tar archive of one tree (a file or directory and what it holds, all under one first name component, as
     * {@code tar cf - -C parent -- name} or Docker's archive endpoint produce it), checking each entry's name before
     * the visitor sees it. The first entry names the tree; each entry is passed relative to it.
     *
     * @param raw     the archive; not closed here
     * @param source  who sent it, for messages ("the container", "the pod")
     * @param visitor receives the entries
     * @throws PathEscapeException when an entry has an absolute name, a {@code ..} segment or lies outside the tree;
     *                             the entries before it were passed
     * @throws IOException         when the stream fails or is not a tar archive, or as the visitor threw it
     */
    public static void read(InputStream raw, String source, EntryVisitor visitor) throws IOException {
        Objects.requireNonNull(visitor, "visitor");
        TarArchiveInputStream tar = new TarArchiveInputStream(new NonClosing(raw));
        String top = null;
        TarArchiveEntry e;
        while ((e = tar.getNextEntry()) != null) {
            String name = e.getName();
            while (name.endsWith("/")) {
                name = name.substring(0, name.length() - 1);
            }
            if (name.startsWith("/") || name.isEmpty()) {
                throw new PathEscapeException(source + " sent an archive entry with an absolute name");
            }
            for (String seg : name.split("/")) {
                if (seg.equals("..")) {
                    throw new PathEscapeException(source + " sent an archive entry with '..'");
                }
            }
            String first = name.contains("/") ? name.substring(0, name.indexOf('/')) : name;
            if (top == null) {
                top = first;
            }
            if (!first.equals(top)) {
                throw new PathEscapeException(source + " sent an archive entry outside the requested tree");
            }
            String rel = name.equals(top) ? "." : name.substring(top.length() + 1);
            EntryType type = typeOf(e);
            Entry entry = new Entry(rel, type, type == EntryType.FILE ? Math.max(0, e.getSize()) : 0,
                    e.getMode() & 07777, e.getLastModifiedDate().toInstant(),
                    type == EntryType.LINK ? e.getLinkName() : null);
            if (!visitor.entry(entry, tar)) {
                return;
            }
        }
    }

    /** What an archive entry is; a hard link is {@link EntryType#OTHER}: its bytes are under another name. */
    static EntryType typeOf(TarArchiveEntry e) {
        if (e.isSymbolicLink()) {
            return EntryType.LINK;
        }
        if (e.isFIFO() || e.isCharacterDevice() || e.isBlockDevice() || e.isLink()) {
            return EntryType.OTHER;
        }
        if (e.isDirectory()) {
            return EntryType.DIRECTORY;
        }
        if (e.isFile()) {
            return EntryType.FILE;
        }
        return EntryType.OTHER;
    }

    /**
     * The archive name of an import source entry under a staging directory.
     *
     * @param stage the staging directory's name (one component)
     * @param rel   the entry's path relative to the source root, {@code "."} for the root
     * @throws PathEscapeException when {@code rel} is absolute, holds a backslash, or has an empty, {@code .} or
     *                             {@code ..} segment
     */
    public static String stageName(String stage, String rel) {
        if (rel.equals(".")) {
            return stage;
        }
        if (rel.startsWith("/") || rel.contains("\\")) {
            throw new PathEscapeException("an import source entry has an absolute name");
        }
        for (String seg : rel.split("/", -1)) {
            if (seg.equals("..") || seg.isEmpty() || seg.equals(".")) {
                throw new PathEscapeException("an import source entry leaves its tree");
            }
        }
        return stage + "/" + rel;
    }

    /**
     * The visitor of an export of one regular file: reads the archive of {@code path} alone (as {@code tar cf - -C
     * parent -- name} or Docker's archive endpoint produce it), whose first entry must be the file itself
     * ({@code "."}, a {@link EntryType#FILE}), and lends its content to an {@link WorkspaceFiles.ExportVisitor}
     * (closing it does not close the archive, which stays its reader's). One copy for the tar-carrying backends.
     */
    public static final class FileExport implements EntryVisitor {

        private final String path;
        private final WorkspaceFiles.ExportVisitor visitor;
        private boolean seen;
        private boolean goOn = true;

        /**
         * @param path    the path as the export was asked, for the visitor and messages
         * @param visitor receives the file
         */
        public FileExport(String path, WorkspaceFiles.ExportVisitor visitor) {
            this.path = Objects.requireNonNull(path, "path");
            this.visitor = Objects.requireNonNull(visitor, "visitor");
        }

        /**
         * @throws InvalidSpecException when the entry is not the regular file itself (a link, a directory, another
         *                              name), or when the visitor could not read it
         */
        @Override
        public boolean entry(Entry e, InputStream content) {
            if (!e.rel().equals(".") || e.type() != EntryType.FILE) {
                throw new InvalidSpecException("'" + path + "' is not a regular file");
            }
            seen = true;
            try {
                goOn = visitor.file(path, e.size(), new NonClosing(content));
            } catch (IOException x) {
                throw new InvalidSpecException("'" + path + "' could not be read", x);
            }
            return false;
        }

        /** True when the file was handed to the visitor. */
        public boolean seen() {
            return seen;
        }

        /** What the visitor returned: false to stop the export; true when it was not called. */
        public boolean goOn() {
            return goOn;
        }
    }

    /**
     * Builds a tar archive for the remote side: directories and regular files only, each owned by the workspace's
     * user, names relative without {@code .}, {@code ..} or empty segments (refused with
     * {@link PathEscapeException}), POSIX (PAX) headers for long names and big numbers. {@link #close} finishes
     * the archive and closes the stream.
     */
    public static final class Writer implements Closeable {

        private final TarArchiveOutputStream tar;
        private final long uid;
        private final long gid;

        /**
         * @param out where the archive goes; closed by {@link #close}
         * @param uid the owner every entry gets
         * @param gid the group every entry gets
         */
        public Writer(OutputStream out, long uid, long gid) {
            this.tar = new TarArchiveOutputStream(out);
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            this.uid = uid;
            this.gid = gid;
        }

        /**
         * Writes what {@code source} yields under the staging directory {@code stage} ({@link #stageName}): a
         * remote backend's import, extracted beside its target and then renamed onto it. Modes the source does not
         * know become {@code 0755} for directories and {@code 0644} for files; {@code readOnly} takes every write
         * bit away.
         *
         * @throws InvalidSpecException when the source refuses what it holds (as the source says it)
         * @throws CodeExecException    when the source fails, naming {@code to} (the import's target, as asked)
         */
        public void stage(ImportSource source, String stage, boolean readOnly, String to) {
            int strip = readOnly ? 0222 : 0;
            try {
                source.forEach(new ImportSource.Visitor() {
                    @Override
                    public void directory(FileEntry d) throws IOException {
                        Writer.this.directory(stageName(stage, d.path()),
                                (d.mode() == 0 ? 0755 : d.mode()) & ~strip, d.modifiedTime());
                    }

                    @Override
                    public void file(FileEntry f, InputStream content) throws IOException {
                        Writer.this.file(stageName(stage, f.path()), f.size(), content,
                                (f.mode() == 0 ? 0644 : f.mode()) & ~strip, f.modifiedTime());
                    }
                });
            } catch (InvalidSpecException e) {
                throw e;
            } catch (IOException | RuntimeException e) {
                throw new CodeExecException("could not import into '" + to + "': the source failed ("
                        + e.getClass().getSimpleName() + ")", e);
            }
        }

        /** Adds a directory with the permission bits of {@code mode}. */
        public void directory(String name, int mode, Instant mtime) throws IOException {
            tar.putArchiveEntry(entry(name, true, 0, mode, mtime));
            tar.closeArchiveEntry();
        }

        /** Adds a regular file holding {@code content}. */
        public void file(String name, byte[] content, int mode, Instant mtime) throws IOException {
            tar.putArchiveEntry(entry(name, false, content.length, mode, mtime));
            tar.write(content);
            tar.closeArchiveEntry();
        }

        /**
         * Adds a regular file of exactly {@code size} bytes from {@code content}: bytes past {@code size} are left
         * out and a shorter stream is padded with zeros (a file that changed while it was copied), so that the
         * archive stays well formed.
         */
        public void file(String name, long size, InputStream content, int mode, Instant mtime) throws IOException {
            tar.putArchiveEntry(entry(name, false, size, mode, mtime));
            long left = size;
            byte[] buf = new byte[64 << 10];
            while (left > 0) {
                int n = content.read(buf, 0, (int) Math.min(buf.length, left));
                if (n < 0) {
                    break;
                }
                tar.write(buf, 0, n);
                left -= n;
            }
            byte[] zeros = new byte[(int) Math.min(buf.length, Math.max(0, left))];
            while (left > 0) {
                int n = (int) Math.min(zeros.length, left);
                tar.write(zeros, 0, n);
                left -= n;
            }
            tar.closeArchiveEntry();
        }

        /** Writes the end of the archive and closes the stream. */
        @Override
        public void close() throws IOException {
            tar.close();
        }

        private TarArchiveEntry entry(String name, boolean dir, long size, int mode, Instant mtime) {
            checkName(name);
            TarArchiveEntry e = new TarArchiveEntry(dir ? name + "/" : name,
                    dir ? TarArchiveEntry.LF_DIR : TarArchiveEntry.LF_NORMAL);
            e.setSize(dir ? 0 : size);
            e.setMode((dir ? 040000 : 0100000) | (mode & 07777));
            e.setUserId(uid);
            e.setGroupId(gid);
            e.setModTime(mtime.toEpochMilli());
            return e;
        }

        private static void checkName(String name) {
            if (name.isEmpty() || name.startsWith("/")) {
                throw new PathEscapeException("an archive entry for the workspace has an absolute name");
            }
            for (String seg : name.split("/", -1)) {
                if (seg.equals("..") || seg.isEmpty() || seg.equals(".")) {
                    throw new PathEscapeException("an archive entry for the workspace leaves its tree");
                }
            }
        }
    }

    /** Keeps a reader (the tar reader, an export's visitor) from closing the stream it was given. */
    private static final class NonClosing extends java.io.FilterInputStream {

        NonClosing(InputStream in) {
            super(in);
        }

        @Override
        public void close() {
            // The caller closes its stream.
        }
    }
}
