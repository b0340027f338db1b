package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactRef;
import java.util.Objects;

/**
 * A snapshot that was stored: its name and version, the artifacts holding its manifest and its pack (the files'
 * bytes), and the manifest. Each version is self-contained: restoring it needs these two artifacts and nothing else.
 *
 * @param name        the snapshot's name
 * @param version     its version (each capture of a name is the next version)
 * @param manifestRef the artifact holding the manifest
 * @param packRef     the artifact holding the files' bytes
 * @param manifest    the manifest
 */
public record Snapshot(String name, int version, ArtifactRef manifestRef, ArtifactRef packRef,
                       SnapshotManifest manifest) {

    public Snapshot {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(manifestRef, "manifestRef");
        Objects.requireNonNull(packRef, "packRef");
        Objects.requireNonNull(manifest, "manifest");
    }

    /** {@code name@version}. */
    public String label() {
        return name + "@" + version;
    }

    /** The bytes stored for the files (the pack's size). */
    public long storedBytes() {
        return manifest.packSize();
    }
}
