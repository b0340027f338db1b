package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.InvalidSpecException;
import java.util.List;

/**
 * Where snapshots live in an {@link ArtifactService}, under a prefix (a conversation's scope, or none):
 * <pre>
 * &lt;prefix&gt;snapshots/packs/&lt;name&gt;        the files' bytes one after another, a new version per capture
 * &lt;prefix&gt;snapshots/manifests/&lt;name&gt;    the manifest, a new version per capture, naming its pack's version
 * </pre>
 * The pack is saved first and the manifest last, so a manifest only ever names a pack that was stored completely; a
 * capture that fails between the two leaves a pack version no manifest names (removed with the snapshot's name).
 */
final class SnapshotStore {

    private final ArtifactService artifacts;
    private final String prefix;

    SnapshotStore(ArtifactService artifacts, String prefix) {
        this.artifacts = artifacts;
        this.prefix = prefix == null ? "" : prefix;
    }

    ArtifactService artifacts() {
        return artifacts;
    }

    /** The pack artifact's name, for a snapshot name {@link #manifestName} accepted. */
    String packName(String snapshot) {
        manifestName(snapshot);
        return prefix + "snapshots/packs/" + snapshot;
    }

    /** The manifest artifact's name; refuses a snapshot name that is not one safe path segment or more. */
    String manifestName(String snapshot) {
        if (snapshot == null || !snapshot.matches("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*") || snapshot.length() > 100
                || List.of(snapshot.split("/")).stream().anyMatch(s -> s.equals(".") || s.equals(".."))) {
            throw new InvalidSpecException("snapshot name " + (snapshot == null ? "null" : "'" + snapshot + "'")
                    + " must be letters, digits, '.', '_' or '-' (segments separated by '/', at most 100 characters)");
        }
        return prefix + "snapshots/manifests/" + snapshot;
    }

    /** The name the model or application used, without the prefix. */
    String unscoped(ArtifactRef ref) {
        return ref.name().substring((prefix + "snapshots/manifests/").length());
    }
}
