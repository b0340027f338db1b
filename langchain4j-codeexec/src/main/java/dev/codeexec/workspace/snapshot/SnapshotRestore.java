package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.DigestCheckingStream;
import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.function.Consumer;

/**
 * Restores a snapshot into a workspace, on any engine, in two sequential reads of its pack:
 * <ol>
 *   <li><b>check</b>: the pack is streamed from the store and every file's range compared with its size and SHA-256
 *       in the manifest; a missing pack or a wrong range refuses the restore with a {@link SnapshotIntegrityException}
 *       naming the path, before anything is written;</li>
 *   <li><b>write</b>: directories are created, then the pack is streamed again and each file's range handed to
 *       {@link WorkspaceFS#writeFile}, through a {@link DigestCheckingStream} once more: the engine fills a temporary
 *       name and moves it into place, so a pack changed between the reads is caught and the file it would have
 *       replaced keeps its content.</li>
 * </ol>
 * Why check first rather than stage everything under temporary names and move it all at the end: the engines'
 * {@link WorkspaceFS} offers an atomic write per file but no rename of a tree, so the only way to leave the target's
 * files untouched when the snapshot is bad, on every backend, is to know it is good before the first write. The price is
 * one more sequential read of the pack (a local read for the file-system store). Files of the target that the
 * snapshot does not hold are never deleted; the receipt lists them as extra.
 *
 * <p>The caller serialises: nothing else may write the workspace meanwhile (the tools hold its lock).
 */
final class SnapshotRestore {

    private SnapshotRestore() {
    }

    /** The manifest of {@code name@version} (the latest when version is null), parsed and checked. */
    static Loaded load(SnapshotStore store, String name, Integer version) {
        String manifestName = store.manifestName(name);
        Artifact a;
        if (version == null) {
            a = store.artifacts().load(manifestName).orElseThrow(() -> new ArtifactNotFoundException("snapshot '"
                    + name + "' does not exist"));
        } else {
            try {
                a = store.artifacts().load(manifestName, version);
            } catch (ArtifactNotFoundException e) {
                throw new ArtifactNotFoundException("snapshot '" + name + "' has no version " + version
                        + " (versions: " + store.artifacts().versions(manifestName) + ")");
            }
        }
        String label = name + "@" + a.ref().version();
        SnapshotManifest m;
        try {
            m = SnapshotManifest.fromJson(a.content());
        } catch (IllegalArgumentException e) {
            throw new SnapshotIntegrityException(null, "snapshot " + label + " is refused: " + e.getMessage());
        }
        for (SnapshotEntry e : m.entries()) {
            String norm;
            try {
                norm = PathResolver.normalize(e.path());
            } catch (CodeExecException x) {
                throw new SnapshotIntegrityException(e.path(), "snapshot " + label + " is refused: its manifest names "
                        + "a path that is not a workspace path ('" + e.path() + "')");
            }
            if (!norm.equals(e.path()) || norm.equals(".")) {
                throw new SnapshotIntegrityException(e.path(), "snapshot " + label + " is refused: its manifest names "
                        + "a path that is not normalised ('" + e.path() + "')");
            }
        }
        return new Loaded(name, label, m);
    }

    /** A parsed manifest, the snapshot's name and its {@code name@version}. */
    record Loaded(String name, String label, SnapshotManifest manifest) {
    }

    static RestoreReceipt restore(Engine engine, Workspace ws, SnapshotStore store, Loaded loaded,
                                  SnapshotOptions bounds, Consumer<String> writeCheck) {
        SnapshotManifest m = loaded.manifest();
        List<SnapshotEntry> files = m.filesInPackOrder();
        if (files.size() > bounds.maxFiles()) {
            throw new SnapshotLimitException(SnapshotLimitException.Bound.MAX_FILES, bounds.maxFiles(), files.size());
        }
        if (m.totalBytes() > bounds.maxTotalBytes()) {
            throw new SnapshotLimitException(SnapshotLimitException.Bound.MAX_TOTAL_BYTES, bounds.maxTotalBytes(),
                    m.totalBytes());
        }
        for (SnapshotEntry e : m.entries()) {
            if (!e.isSkipped()) {
                writeCheck.accept(e.path());
            }
        }
        readPack(store, loaded, files, (f, range) -> range.finish());
        WorkspaceFS fs = engine.fs();
        for (SnapshotEntry e : m.entries()) {
            if (e.type() == SnapshotEntry.Type.DIRECTORY) {
                fs.createDirectories(ws, e.path());
            }
        }
        long[] bytes = {0};
        readPack(store, loaded, files, (f, range) -> {
            fs.writeFile(ws, f.path(), range, f.size(), f.hasMode() ? f.mode() & 0777 : 0644, f.modified());
            range.finish(); // an engine that stopped at the size has not seen the end, where the digest is checked
            bytes[0] += f.size();
        });
        return ReceiptCheck.check(engine, ws, m, loaded.label(), files.size(), bytes[0], bounds);
    }

    /** What a restore does with one file's range of the pack, checked against the manifest as it is read. */
    private interface RangeUse {
        void use(SnapshotEntry file, DigestCheckingStream range) throws IOException;
    }

    /**
     * Reads the pack once, in order, lending each file's range through a digest check, then reads to the pack's end
     * (where a store that checks integrity checks it); any failure becomes a refusal naming the path.
     */
    private static void readPack(SnapshotStore store, Loaded loaded, List<SnapshotEntry> files, RangeUse use) {
        SnapshotManifest m = loaded.manifest();
        String label = loaded.label();
        SnapshotEntry[] current = {null};
        try {
            store.artifacts().read(store.packName(loaded.name()), m.packVersion(), (in, size) -> {
                if (size != m.packSize()) {
                    throw new SnapshotIntegrityException(null, "snapshot " + label + " is refused: its pack holds "
                            + size + " bytes where the manifest records " + m.packSize() + "; nothing was written");
                }
                long position = 0;
                for (SnapshotEntry f : files) {
                    current[0] = f;
                    in.skipNBytes(f.offset() - position);
                    use.use(f, new DigestCheckingStream(new Range(in, f.size()), f.sha256(), f.size(),
                            what -> new ContentMismatch(f.path(), what)));
                    position = f.offset() + f.size();
                }
                current[0] = null;
                in.transferTo(OutputStream.nullOutputStream());
                return null;
            });
        } catch (ArtifactNotFoundException e) {
            throw new SnapshotIntegrityException(null, "snapshot " + label + " is refused: its pack (version "
                    + m.packVersion() + ") is missing from the artifact store; nothing was written", e);
        } catch (UncheckedIOException | CodeExecException e) {
            if (e instanceof SnapshotIntegrityException s) {
                throw s;
            }
            ContentMismatch mm = ContentMismatch.in(e);
            String path = mm != null ? mm.path() : current[0] != null ? current[0].path() : null;
            boolean damaged = mm != null || e instanceof UncheckedIOException
                    || String.valueOf(e.getMessage()).contains("damaged");
            if (!damaged) {
                throw e;
            }
            String why = mm != null ? mm.getMessage() : e instanceof UncheckedIOException u
                    && u.getCause() instanceof EOFException ? "the pack ends early" : "the store reports it damaged";
            throw new SnapshotIntegrityException(path, "snapshot " + label + " is refused: "
                    + (path == null ? "its pack" : "the content of '" + path + "'") + " does not match the manifest ("
                    + why + "); " + (path == null ? "no file was changed by it" : "the file was not written"), e);
        }
    }

    /** At most {@code remaining} bytes of the pack, never closing it: one file's range. */
    private static final class Range extends FilterInputStream {
        private long remaining;

        Range(InputStream in, long size) {
            super(in);
            this.remaining = size;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = super.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new EOFException("the pack ends " + remaining + " bytes early");
            }
            remaining -= n;
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            return super.skip(Math.min(n, remaining));
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(super.available(), remaining);
        }

        @Override
        public void close() {
            // the pack belongs to the store's read
        }
    }
}
