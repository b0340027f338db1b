package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactRef;
import java.util.Objects;

/**
 * A snapshot that was stored: its name and version, the manifest's artifact, the manifest, and how many blobs the
 * capture had to store (files whose content no earlier snapshot of the same store held).
 *
 * @param name        the snapshot's name
 * @param version     its version (each capture of a name is the next version)
 * @param manifestRef the artifact holding the manifest
 * @param manifest    the manifest
 * @param blobsStored blobs this capture stored; the rest were already in the store
 */
public record Snapshot(String name, int version, ArtifactRef manifestRef, SnapshotManifest manifest,
                       int blobsStored) {

    public Snapshot {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(manifestRef, "manifestRef");
        Objects.requireNonNull(manifest, "manifest");
    }

    /** {@code name@version}. */
    public String label() {
        return name + "@" + version;
    }
}
