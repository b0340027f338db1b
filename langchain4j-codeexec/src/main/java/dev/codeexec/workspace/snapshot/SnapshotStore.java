package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.InvalidSpecException;
import java.util.List;

/**
 * Where snapshots live in an {@link ArtifactService}, under a prefix (a conversation's scope, or none):
 * <pre>
 * &lt;prefix&gt;snapshots/blobs/&lt;sha256&gt;       one artifact per distinct content, version 1, shared by snapshots
 * &lt;prefix&gt;snapshots/manifests/&lt;name&gt;    the manifest, a new version per capture of that name
 * </pre>
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

    String blobName(String sha256) {
        return prefix + "snapshots/blobs/" + sha256;
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

    /** The version of a blob to read: the latest, or 0 when the store has none. */
    int blobVersion(String sha256) {
        List<Integer> v = artifacts.versions(blobName(sha256));
        return v.isEmpty() ? 0 : v.get(v.size() - 1);
    }

    /** The name the model or application used, without the prefix. */
    String unscoped(ArtifactRef ref) {
        return ref.name().substring((prefix + "snapshots/manifests/").length());
    }
}
