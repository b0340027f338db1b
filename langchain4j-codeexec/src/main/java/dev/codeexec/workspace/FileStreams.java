package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileContentVisitor;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceEntry;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The streaming file operations of {@link StandardWorkspaceFS} ({@code entries}, {@code readFiles}, {@code writeFile})
 * on a backend's {@link WorkspaceFiles}: an entry walk that reports links and special files as such, with modes; a
 * batch read that lends each file's stream (one archive on a container backend); and a write of one file from a
 * stream through {@link WorkspaceFiles#importTree}, which fills a hidden temporary name and moves it into place, so a
 * failed stream leaves the old file as it was. Also the write checks shared with {@code putFiles}.
 */
final class FileStreams {

    private FileStreams() {
    }

    /** Walks below {@code dir} (already normalised and allowed) without following links. */
    static boolean entries(WorkspaceFiles f, PathAccess access, String dir, Predicate<WorkspaceEntry> visitor) {
        String real = f.resolve(dir);
        Optional<FileEntry> top = f.stat(real);
        if (top.isEmpty() || !top.get().isDirectory()) {
            return true;
        }
        boolean[] stopped = {false};
        f.walk(real, e -> {
            String name = e.name();
            if (name.startsWith(WorkspaceFiles.WRITE_TEMP_PREFIX) || name.startsWith(WorkspaceFiles.IMPORT_TEMP_PREFIX)
                    || !access.canRead(e.path())) {
                return WorkspaceFiles.WalkAction.SKIP_SUBTREE;
            }
            if (!visitor.test(entry(e))) {
                stopped[0] = true;
                return WorkspaceFiles.WalkAction.STOP;
            }
            return WorkspaceFiles.WalkAction.CONTINUE;
        });
        return !stopped[0];
    }

    private static WorkspaceEntry entry(FileEntry e) {
        WorkspaceEntry.Kind kind = switch (e.type()) {
            case FILE -> WorkspaceEntry.Kind.FILE;
            case DIRECTORY -> WorkspaceEntry.Kind.DIRECTORY;
            case LINK -> WorkspaceEntry.Kind.LINK;
            case OTHER -> WorkspaceEntry.Kind.OTHER;
        };
        // A primitive reports 0 when its backend has no Unix modes; a real mode of 0 is kept as "not reported" too.
        return new WorkspaceEntry(e.path(), kind, e.isFile() ? e.size() : 0, e.mode() == 0 ? -1 : e.mode() & 07777,
                e.modifiedTime());
    }

    /** Lends each file's content to the visitor, in one batch of the primitives. */
    static void readFiles(WorkspaceFiles f, PathAccess access, List<String> paths, FileContentVisitor visitor) {
        List<String> norm = new ArrayList<>(paths.size());
        for (String p : paths) {
            String n = PathResolver.normalize(p);
            StandardWorkspaceFS.requireRead(access, n);
            norm.add(n);
        }
        f.export(norm, visitor::file);
    }

    /** Writes one file from a stream: a hidden temporary name filled, then moved into place. */
    static void writeFile(WorkspaceFiles f, String norm, InputStream content, long size, int mode, Instant modified) {
        checkWritable(f, norm);
        ImportSource source = new ImportSource() {
            @Override
            public Optional<Path> hostPath() {
                return Optional.empty();
            }

            @Override
            public long sizeBytes() {
                return size;
            }

            @Override
            public void forEach(Visitor v) throws IOException {
                v.file(new FileEntry(".", EntryType.FILE, size, mode & 0777,
                        modified == null ? Instant.now() : modified), content);
            }
        };
        try {
            f.importTree(source, norm, false);
        } catch (CodeExecException e) {
            // The primitives wrap the stream's failure; hand the caller its IOException (a digest found wrong, say).
            Throwable c = e.getCause();
            throw c instanceof IOException io ? new CodeExecException("could not write '" + norm + "': "
                    + io.getMessage(), io) : e;
        }
    }

    /**
     * Checks, without creating anything, what a write will check: the target is not the root or a directory, no
     * parent escapes, and the nearest existing parent is a directory. A link at the target itself is fine: the write
     * replaces it.
     */
    static void checkWritable(WorkspaceFiles f, String norm) {
        if (norm.equals(".")) {
            throw new InvalidSpecException("cannot write to the workspace root itself; name a file");
        }
        if (f.stat(norm).map(FileEntry::isDirectory).orElse(false)) {
            throw new InvalidSpecException("'" + norm + "' is a directory");
        }
        String existing = f.resolve(parent(norm));
        while (!existing.equals(".") && f.stat(existing).isEmpty()) {
            existing = parent(existing);
        }
        if (!existing.equals(".") && !f.stat(existing).map(FileEntry::isDirectory).orElse(false)) {
            throw new InvalidSpecException("'" + existing + "' is not a directory");
        }
    }

    private static String parent(String norm) {
        int slash = norm.lastIndexOf('/');
        return slash < 0 ? "." : norm.substring(0, slash);
    }
}
