package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.DigestCheckingStream;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Takes one snapshot in one read of the workspace, never holding a file in memory:
 * <ol>
 *   <li>select the entries (bounds checked on the listed sizes, before anything is read);</li>
 *   <li>stream every file from the engine into the snapshot's new pack version, hashing each file's bytes as they
 *       pass and checking the byte bound again as they arrive (a file may have grown since it was listed);</li>
 *   <li>store the manifest, which records each file's digest, size and offset in the pack.</li>
 * </ol>
 * The digest is of exactly the bytes written to the pack, so the manifest and the pack agree even when a background
 * program writes meanwhile (what it wrote lands or does not, as in any copy). A bound crossed or a read that fails
 * stores nothing: the pack's version is published only when complete, and the manifest only after it.
 *
 * <p>Why one pack rather than one artifact per distinct content: an artifact store's save is made durable one by one
 * (a synced file, a claimed version, a synced directory), which for ten thousand small files cost tens of times what
 * copying the bytes does; one pack is one sequential write synced once. Identical files are stored as often as they
 * occur, as in an archive.
 *
 * <p>The caller serialises: no run of the same workspace may write while this reads (the tools and
 * {@code WorkspaceIO} hold the workspace's lock).
 */
final class SnapshotCapture {

    static final String LINK_REASON = "symbolic link: never followed, as input staging leaves links out";
    static final String SPECIAL_REASON = "special file (FIFO, socket or device): never opened";

    private SnapshotCapture() {
    }

    static Snapshot capture(Engine engine, Workspace ws, SnapshotStore store, String name, SnapshotOptions o) {
        String manifestName = store.manifestName(name);
        SnapshotSelection sel = SnapshotSelection.select(engine.fs(), ws, o.walkedRoots(), o.globs(), o.includeRuns(),
                o.maxFiles(), o.maxTotalBytes(), true);
        if (!sel.complete()) {
            throw new CodeExecException("the workspace could not be listed completely; nothing was recorded");
        }
        PackWriter pack = new PackWriter(o.maxTotalBytes());
        ArtifactRef packRef;
        try {
            packRef = store.artifacts().saveWritten(store.packName(name), out -> {
                pack.out = out;
                try {
                    engine.fs().readFiles(ws, sel.filePaths(), pack::add);
                } catch (PackWriter.OutputFailed e) {
                    throw e.getCause(); // the store's own failure, reported by the store as such
                }
            }, "application/octet-stream");
        } catch (UncheckedIOException e) {
            throw new CodeExecException("the snapshot could not be written (" + e.getCause().getMessage()
                    + "); nothing was recorded", e);
        }
        List<SnapshotEntry> entries = new ArrayList<>();
        for (WorkspaceEntry e : sel.entries().values()) {
            entries.add(switch (e.kind()) {
                case FILE -> {
                    PackWriter.Packed p = pack.packed.get(e.path());
                    yield SnapshotEntry.file(e.path(), p.size(), p.sha256(), p.offset(), e.mode(),
                            e.modified().equals(Instant.EPOCH) ? null : e.modified());
                }
                case DIRECTORY -> SnapshotEntry.directory(e.path(), e.mode());
                case LINK -> SnapshotEntry.skipped(e.path(), SnapshotEntry.Type.LINK, LINK_REASON);
                case OTHER -> SnapshotEntry.skipped(e.path(), SnapshotEntry.Type.SPECIAL, SPECIAL_REASON);
            });
        }
        SnapshotManifest manifest = new SnapshotManifest(SnapshotManifest.FORMAT_VERSION, Instant.now(),
                engine.name(), o.roots(), o.globs(), o.includeRuns(), packRef.version(), pack.offset, entries);
        ArtifactRef ref = store.artifacts().save(manifestName, manifest.toJson(), "application/json");
        return new Snapshot(name, ref.version(), ref, packRef, manifest);
    }

    /** Appends the files lent by the engine to the pack, recording each one's digest, size and offset. */
    private static final class PackWriter {
        private final long maxBytes;
        private final byte[] buf = new byte[64 * 1024];
        private final Map<String, Packed> packed = new HashMap<>();
        private OutputStream out;
        private long offset;

        PackWriter(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        record Packed(long offset, long size, String sha256) {
        }

        /** Writing the pack failed: the store's failure, carried through the engine's read unchanged. */
        static final class OutputFailed extends RuntimeException {
            OutputFailed(IOException cause) {
                super(cause);
            }

            @Override
            public synchronized IOException getCause() {
                return (IOException) super.getCause();
            }
        }

        boolean add(String path, long listedSize, InputStream in) throws IOException {
            MessageDigest sha = DigestCheckingStream.sha256();
            long start = offset;
            for (int r; (r = in.read(buf)) >= 0; ) {
                if (offset + r > maxBytes) {
                    throw new SnapshotLimitException(SnapshotLimitException.Bound.MAX_TOTAL_BYTES, maxBytes,
                            offset + r);
                }
                sha.update(buf, 0, r);
                try {
                    out.write(buf, 0, r);
                } catch (IOException e) {
                    throw new OutputFailed(e); // through the engine's read, which reports IOExceptions as its own
                }
                offset += r;
            }
            packed.put(path, new Packed(start, offset - start, DigestCheckingStream.hex(sha)));
            return true;
        }
    }
}
