package dev.codeexec.artifact;

import java.util.List;
import java.util.Optional;

/**
 * Durable, versioned files that outlive workspaces. Each save of a name creates the next version (1, 2, ...).
 * Implementations are thread-safe: concurrent saves of one name get distinct versions.
 *
 * <p>Names are relative, {@code /}-separated paths of safe segments ({@code [A-Za-z0-9._-]}, no {@code .} or
 * {@code ..} segment, at most 255 characters); anything else is refused with {@link IllegalArgumentException}.
 */
public interface ArtifactService {

    /** Saves a new version and returns its reference. */
    ArtifactRef save(String name, byte[] content, String mimeType);

    /** Loads the latest version, or empty when the name has none. */
    Optional<Artifact> load(String name);

    /**
     * Loads one version.
     *
     * @throws ArtifactNotFoundException when that version does not exist (the message lists the versions that do)
     */
    Artifact load(String name, int version);

    /** Loads what a reference names: its version, or the latest when it has none. */
    default Artifact load(ArtifactRef ref) {
        if (ref.version() != null) {
            return load(ref.name(), ref.version());
        }
        return load(ref.name()).orElseThrow(() -> new ArtifactNotFoundException(
                "artifact '" + ref.name() + "' does not exist"));
    }

    /** The versions of a name, ascending; empty when it has none. */
    List<Integer> versions(String name);

    /** The names that have at least one version, sorted. */
    List<String> names();

    /** Deletes every version of a name. Deleting a missing name does nothing. */
    void delete(String name);
}
