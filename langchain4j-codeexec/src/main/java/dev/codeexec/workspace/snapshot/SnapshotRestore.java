package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.workspace.PathResolver;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Restores a snapshot into a workspace, on any engine, in two passes over the blobs:
 * <ol>
 *   <li><b>check</b>: every distinct blob is streamed from the store and its size and SHA-256 compared with the
 *       manifest; a missing or wrong blob refuses the restore with a {@link SnapshotIntegrityException} naming the
 *       path, before anything is written;</li>
 *   <li><b>write</b>: directories are created, then each file is streamed from the store into
 *       {@link WorkspaceFS#writeFile}, through a {@link DigestCheckingStream} once more: the engine fills a temporary
 *       name and moves it into place, so a blob changed between the passes is caught and the file it would have
 *       replaced keeps its content.</li>
 * </ol>
 * Why check first rather than stage everything under temporary names and move it all at the end: the engines'
 * {@link WorkspaceFS} offers an atomic write per file but no rename of a tree, so the only way to leave the target's
 * files untouched when the snapshot is bad, on every backend, is to know it is good before the first write. The price is
 * one more read of the blobs from the store (a local read for the file-system store). Files of the target that the
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
        return new Loaded(label, m);
    }

    /** A parsed manifest and its {@code name@version}. */
    record Loaded(String label, SnapshotManifest manifest) {
    }

    static RestoreReceipt restore(Engine engine, Workspace ws, SnapshotStore store, Loaded loaded,
                                  SnapshotOptions bounds, Consumer<String> writeCheck) {
        SnapshotManifest m = loaded.manifest();
        List<SnapshotEntry> files = m.files();
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
        Map<String, SnapshotEntry> byDigest = new LinkedHashMap<>();
        for (SnapshotEntry f : files) {
            byDigest.putIfAbsent(f.sha256(), f);
        }
        byte[] buf = new byte[64 * 1024];
        Map<String, Integer> versions = new HashMap<>(); // the blob version each digest is read from, found once
        for (SnapshotEntry f : byDigest.values()) {
            versions.put(f.sha256(), store.blobVersion(f.sha256()));
        }
        for (SnapshotEntry f : byDigest.values()) {
            readBlob(store, versions, loaded.label(), f, in -> {
                while (in.read(buf) >= 0) {
                    // hashing happens in the stream; the bytes themselves are not needed
                }
            });
        }
        WorkspaceFS fs = engine.fs();
        for (SnapshotEntry e : m.entries()) {
            if (e.type() == SnapshotEntry.Type.DIRECTORY) {
                fs.createDirectories(ws, e.path());
            }
        }
        long bytes = 0;
        for (SnapshotEntry f : files) {
            readBlob(store, versions, loaded.label(), f, in -> fs.writeFile(ws, f.path(), in, f.size(),
                    f.hasMode() ? f.mode() & 0777 : 0644, f.modified()));
            bytes += f.size();
        }
        return ReceiptCheck.check(engine, ws, m, loaded.label(), files.size(), bytes, bounds);
    }

    /** What a restore does with one blob's checked stream. */
    private interface BlobUse {
        void use(java.io.InputStream checked) throws java.io.IOException;
    }

    /** Lends the blob of {@code f} through a digest check; any failure becomes a refusal naming the path. */
    private static void readBlob(SnapshotStore store, Map<String, Integer> versions, String label, SnapshotEntry f,
                                 BlobUse use) {
        int version = versions.get(f.sha256());
        if (version == 0) {
            throw new SnapshotIntegrityException(f.path(), "snapshot " + label + " is refused: the content of '"
                    + f.path() + "' (SHA-256 " + f.sha256() + ") is missing from the artifact store; nothing was "
                    + "written");
        }
        try {
            store.artifacts().read(store.blobName(f.sha256()), version, (in, size) -> {
                use.use(new DigestCheckingStream(in, f.sha256(), f.size(), f.path()));
                return null;
            });
        } catch (UncheckedIOException | CodeExecException e) {
            if (e instanceof SnapshotIntegrityException s) {
                throw s;
            }
            DigestCheckingStream.Mismatch mm = SnapshotCapture.mismatch(e);
            boolean damaged = mm != null || e instanceof UncheckedIOException
                    || String.valueOf(e.getMessage()).contains("damaged");
            if (!damaged) {
                throw e;
            }
            String why = mm != null ? mm.getMessage() : "the store reports it damaged";
            throw new SnapshotIntegrityException(f.path(), "snapshot " + label + " is refused: the content of '"
                    + f.path() + "' does not match the manifest (" + why + "); the file was not written", e);
        }
    }
}
