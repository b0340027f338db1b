package dev.codeexec.workspace.spi;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@link ImportSource#ofWorkspace}: a part of a workspace, read through its own primitives. Links and special files
 * are left out; hidden temporary names are copied like any other (the source is what the caller named).
 */
final class WorkspaceTreeSource implements ImportSource {

    private final WorkspaceFiles files;
    private final String root;

    WorkspaceTreeSource(WorkspaceFiles files, String path) {
        this.files = Objects.requireNonNull(files, "files");
        this.root = Objects.requireNonNull(path, "path");
    }

    @Override
    public Optional<java.nio.file.Path> hostPath() {
        return Optional.empty();
    }

    @Override
    public long sizeBytes() {
        Optional<FileEntry> top = files.stat(root);
        if (top.isEmpty()) {
            return 0;
        }
        if (top.get().isFile()) {
            return top.get().size();
        }
        long[] sum = {0};
        files.walk(root, e -> {
            if (e.isFile()) {
                sum[0] += e.size();
            }
            return WorkspaceFiles.WalkAction.CONTINUE;
        });
        return sum[0];
    }

    @Override
    public void forEach(Visitor visitor) throws IOException {
        FileEntry top = files.stat(root).orElseThrow(() -> new NoSuchFileException("."));
        try {
            if (top.isFile()) {
                copy(root, top.withPath("."), visitor);
            } else if (top.isDirectory()) {
                visitor.directory(top.withPath("."));
                String prefix = root.equals(".") ? "" : root + "/";
                files.walk(root, e -> {
                    String rel = e.path().substring(prefix.length());
                    try {
                        if (e.isDirectory()) {
                            visitor.directory(e.withPath(rel));
                        } else if (e.isFile()) {
                            copy(e.path(), e.withPath(rel), visitor);
                        }
                    } catch (IOException x) {
                        throw new Tunnel(x);
                    }
                    return WorkspaceFiles.WalkAction.CONTINUE;
                });
            }
        } catch (Tunnel t) {
            throw t.getCause();
        }
    }

    /** Lends one file's content to the visitor, with the size it had when it was opened. */
    private void copy(String path, FileEntry entry, Visitor visitor) {
        files.export(List.of(path), (p, size, in) -> {
            try {
                visitor.file(new FileEntry(entry.path(), EntryType.FILE, size, entry.mode(), entry.modifiedTime()), in);
            } catch (IOException x) {
                // Not the provider's read failure to translate: the import's own, handed back to it.
                throw new Tunnel(x);
            }
            return true;
        });
    }

    /** Carries the visitor's IOException through the primitives' visitors, which cannot throw it. */
    private static final class Tunnel extends UncheckedIOException {
        Tunnel(IOException cause) {
            super(cause);
        }
    }

    @Override
    public String toString() {
        return "ImportSource{workspace " + root + "}";
    }
}
