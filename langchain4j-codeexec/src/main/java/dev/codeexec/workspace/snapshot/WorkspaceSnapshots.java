package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Workspace snapshots: capture a workspace's files into an {@link ArtifactService} as a versioned snapshot (a pack of
 * the files' bytes and a manifest giving each file's size, SHA-256, mode and place in the pack), and restore one into a workspace of the same or <em>another</em> engine, with a {@link RestoreReceipt} that
 * says what the engine shows afterwards. Everything goes through the engine's {@link dev.codeexec.engine.WorkspaceFS}
 * ({@code entries}, {@code readFiles}, {@code writeFile}), so any backend can be the source or the target, and files
 * are streamed: neither the workspace nor a file is ever held in memory.
 *
 * <pre>{@code
 * WorkspaceSnapshots snapshots = new WorkspaceSnapshots(artifacts);
 * Snapshot s = snapshots.capture(sandbox, ws, "analysis", SnapshotOptions.DEFAULT);   // analysis@1
 * RestoreReceipt r = snapshots.restore(container, otherWs, "analysis", s.version());
 * if (!r.clean()) { log.warn(r.summary()); }
 * }</pre>
 *
 * <p><b>What a snapshot carries</b>: the regular files (content, size, SHA-256, mode where the backend reports it,
 * modification time) and directories under {@code work/}, {@code out/} and {@code home/} (or the roots chosen), plus
 * files matching the configured globs; {@code runs/} only when asked. <b>What it does not</b>: see
 * {@link RestoreReceipt#NOT_CARRIED} (processes, interpreter or kernel memory, packages installed outside the
 * workspace, links and special files, which are listed as skipped).
 *
 * <p><b>Threads and serialisation</b>: an instance is stateless and thread-safe, but a capture or a restore must not
 * run while a program of the same workspace writes: the caller holds the workspace's lock (the tools,
 * {@code WorkspaceIO} and {@code CodeExecution.fork} do). A capture that finds a file changed under it fails rather
 * than record a digest its blob does not have.
 */
public final class WorkspaceSnapshots {

    private final SnapshotStore store;

    /** Snapshots stored under {@code snapshots/} of the store, unscoped. */
    public WorkspaceSnapshots(ArtifactService artifacts) {
        this(artifacts, "");
    }

    /**
     * @param artifacts the store
     * @param prefix    an artifact name prefix such as a conversation's scope ({@code conversations/abc/}), or "";
     *                  the snapshots of different prefixes never see each other
     */
    public WorkspaceSnapshots(ArtifactService artifacts, String prefix) {
        this.store = new SnapshotStore(Objects.requireNonNull(artifacts, "artifacts"), prefix);
    }

    /**
     * Captures the workspace as the next version of snapshot {@code name}.
     *
     * @param name letters, digits, {@code .}, {@code _}, {@code -}, segments separated by {@code /}
     * @return the stored snapshot
     * @throws SnapshotLimitException when it would exceed a bound (nothing recorded)
     * @throws dev.codeexec.engine.CodeExecException when the workspace cannot be read, or a file changed under the
     *                                                capture (no manifest recorded)
     */
    public Snapshot capture(Engine engine, Workspace ws, String name, SnapshotOptions options) {
        return SnapshotCapture.capture(engine, ws, store, name, options == null ? SnapshotOptions.DEFAULT : options);
    }

    /**
     * Restores snapshot {@code name} (version {@code version}, or the latest when null) into the workspace, within
     * the default bounds. Files of the workspace the snapshot does not hold are kept (the receipt lists them as extra).
     *
     * @throws SnapshotIntegrityException when a blob is missing or does not match the manifest (nothing written)
     * @throws SnapshotLimitException     when the manifest holds more than the bounds allow (nothing written)
     * @throws dev.codeexec.artifact.ArtifactNotFoundException when there is no such snapshot
     */
    public RestoreReceipt restore(Engine engine, Workspace ws, String name, Integer version) {
        return restore(engine, ws, name, version, SnapshotOptions.DEFAULT, false);
    }

    /**
     * Restores as {@link #restore(Engine, Workspace, String, Integer)}, within {@code bounds}'s
     * {@link SnapshotOptions#maxFiles()} and {@link SnapshotOptions#maxTotalBytes()}.
     *
     * @param asPrograms check every path with {@link dev.codeexec.engine.WorkspaceFS#checkWritableByPrograms} before
     *                   writing anything, as a write the model asked for must be (the tools do)
     */
    public RestoreReceipt restore(Engine engine, Workspace ws, String name, Integer version, SnapshotOptions bounds,
                                  boolean asPrograms) {
        SnapshotRestore.Loaded loaded = SnapshotRestore.load(store, name, version);
        Consumer<String> check = asPrograms ? p -> engine.fs().checkWritableByPrograms(ws, p) : p -> { };
        return SnapshotRestore.restore(engine, ws, store, loaded,
                bounds == null ? SnapshotOptions.DEFAULT : bounds, check);
    }

    /**
     * Compares the workspace with a snapshot without restoring anything: the receipt a restore would end with.
     */
    public RestoreReceipt check(Engine engine, Workspace ws, String name, Integer version) {
        SnapshotRestore.Loaded loaded = SnapshotRestore.load(store, name, version);
        return ReceiptCheck.check(engine, ws, loaded.manifest(), loaded.label(), 0, 0, SnapshotOptions.DEFAULT);
    }

    /** The manifest of {@code name@version} (the latest when null). */
    public SnapshotManifest manifest(String name, Integer version) {
        return SnapshotRestore.load(store, name, version).manifest();
    }

    /**
     * Deletes every version of snapshot {@code name}: its manifests and its packs (including a pack a failed capture
     * left without a manifest). Other snapshots are untouched: each version is self-contained.
     */
    public void delete(String name) {
        String manifests = store.manifestName(name);
        store.artifacts().delete(manifests); // the manifests first: a pack no manifest names is never read
        store.artifacts().delete(store.packName(name));
    }

    /** The versions of snapshot {@code name}, ascending; empty when there is none. */
    public List<Integer> versions(String name) {
        return store.artifacts().versions(store.manifestName(name));
    }
}
