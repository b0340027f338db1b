package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Takes one snapshot, in three steps that never hold a file in memory:
 * <ol>
 *   <li>select the entries (bounds checked on the listed sizes, before anything is read);</li>
 *   <li>hash every file, streamed from the engine, checking the byte bound again as the bytes arrive (a file may have
 *       grown since it was listed);</li>
 *   <li>store the blobs the store does not hold yet, streamed again from the engine through a
 *       {@link DigestCheckingStream}, so that a blob is kept only when its bytes have the digest the manifest will
 *       record; then store the manifest.</li>
 * </ol>
 * A bound crossed in step 1 or 2 stores nothing. A failure in step 3 stores no manifest (blobs already stored stay:
 * they are content-addressed, and a later capture reuses them). Reading twice costs a second read of new files; in
 * exchange no temporary copy is needed, and only content new to the store is read twice.
 *
 * <p>The caller serialises: no run of the same workspace may write while this reads (the tools and
 * {@code WorkspaceIO} hold the workspace's lock). A file that changes between the two reads anyway (a background
 * program) makes the capture fail rather than record a digest that does not match its blob.
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
        Map<String, String[]> hashed = hash(engine, ws, sel.filePaths(), o.maxTotalBytes());
        int stored = storeBlobs(engine, ws, store, hashed);
        List<SnapshotEntry> entries = new ArrayList<>();
        for (WorkspaceEntry e : sel.entries().values()) {
            entries.add(switch (e.kind()) {
                case FILE -> {
                    String[] h = hashed.get(e.path());
                    yield SnapshotEntry.file(e.path(), Long.parseLong(h[1]), h[0], e.mode(),
                            e.modified().equals(Instant.EPOCH) ? null : e.modified());
                }
                case DIRECTORY -> SnapshotEntry.directory(e.path(), e.mode());
                case LINK -> SnapshotEntry.skipped(e.path(), SnapshotEntry.Type.LINK, LINK_REASON);
                case OTHER -> SnapshotEntry.skipped(e.path(), SnapshotEntry.Type.SPECIAL, SPECIAL_REASON);
            });
        }
        SnapshotManifest manifest = new SnapshotManifest(SnapshotManifest.FORMAT_VERSION, Instant.now(),
                engine.name(), o.roots(), o.globs(), o.includeRuns(), entries);
        ArtifactRef ref = store.artifacts().save(manifestName, manifest.toJson(), "application/json");
        return new Snapshot(name, ref.version(), ref, manifest, stored);
    }

    /** Path to {sha256, size}, read from the engine. */
    private static Map<String, String[]> hash(Engine engine, Workspace ws, List<String> paths, long maxBytes) {
        Map<String, String[]> out = new HashMap<>();
        long[] total = {0};
        byte[] buf = new byte[64 * 1024];
        engine.fs().readFiles(ws, paths, (path, size, in) -> {
            MessageDigest sha = DigestCheckingStream.sha256();
            long n = 0;
            for (int r; (r = in.read(buf)) >= 0; ) {
                sha.update(buf, 0, r);
                n += r;
                total[0] += r;
                if (total[0] > maxBytes) {
                    throw new SnapshotLimitException(SnapshotLimitException.Bound.MAX_TOTAL_BYTES, maxBytes, total[0]);
                }
            }
            out.put(path, new String[] {DigestCheckingStream.hex(sha), Long.toString(n)});
            return true;
        });
        return out;
    }

    /** Stores each digest the store lacks, from the first file that has it; returns how many were stored. */
    private static int storeBlobs(Engine engine, Workspace ws, SnapshotStore store, Map<String, String[]> hashed) {
        Map<String, String> toStore = new LinkedHashMap<>(); // path -> digest, one path per new digest
        Map<String, Boolean> known = new HashMap<>();
        for (Map.Entry<String, String[]> e : hashed.entrySet()) {
            String sha = e.getValue()[0];
            // Known: already in the store, or already chosen to be stored from another path.
            if (known.computeIfAbsent(sha, s -> store.blobVersion(s) > 0)) {
                continue;
            }
            toStore.put(e.getKey(), sha);
            known.put(sha, true);
        }
        if (toStore.isEmpty()) {
            return 0;
        }
        try {
            engine.fs().readFiles(ws, new ArrayList<>(toStore.keySet()), (path, size, in) -> {
                String sha = toStore.get(path);
                long expected = Long.parseLong(hashed.get(path)[1]);
                save(store, sha, new DigestCheckingStream(in, sha, expected, path));
                return true;
            });
        } catch (CodeExecException e) {
            DigestCheckingStream.Mismatch m = mismatch(e);
            if (m == null) {
                throw e;
            }
            throw new CodeExecException("'" + m.path() + "' changed while the snapshot read it (" + m.getMessage()
                    + "); no snapshot was recorded. A background program may be writing it: retry once it is done",
                    e);
        }
        return toStore.size();
    }

    private static void save(SnapshotStore store, String sha, InputStream in) throws IOException {
        try {
            store.artifacts().saveStream(store.blobName(sha), in, "application/octet-stream");
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** The digest mismatch among the causes of a failure, or null. */
    static DigestCheckingStream.Mismatch mismatch(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DigestCheckingStream.Mismatch m) {
                return m;
            }
        }
        return null;
    }
}
