package dev.codeexec.sandbox;

import java.util.List;

/**
 * Extra grants for one run only ({@link SandboxEngine#runProgram(dev.codeexec.engine.Workspace,
 * dev.codeexec.engine.RunProgramSpec, AdditionalPermissions)}): the engine's profile is not changed, and the next run
 * does not see them. The same validation as {@link PermissionProfile#withReadPaths} and
 * {@link PermissionProfile#withWritePaths} applies; a grant of a path the profile hides is refused as contradictory.
 *
 * @param readPaths  extra read-only paths (host-absolute, or workspace-relative); null means none
 * @param writePaths extra writable paths; null means none
 * @param network    the network for this run; null keeps the profile's
 */
public record AdditionalPermissions(List<String> readPaths, List<String> writePaths, NetworkMode network) {

    /** Nothing extra. */
    public static final AdditionalPermissions NONE = new AdditionalPermissions(null, null, null);

    public AdditionalPermissions {
        readPaths = readPaths == null ? List.of() : List.copyOf(readPaths);
        writePaths = writePaths == null ? List.of() : List.copyOf(writePaths);
    }

    /** Read-only access to the given paths for one run. */
    public static AdditionalPermissions read(String... paths) {
        return new AdditionalPermissions(List.of(paths), null, null);
    }

    /** Write access to the given paths for one run. */
    public static AdditionalPermissions write(String... paths) {
        return new AdditionalPermissions(null, List.of(paths), null);
    }

    /** True when nothing is added. */
    public boolean isEmpty() {
        return readPaths.isEmpty() && writePaths.isEmpty() && network == null;
    }

    /** Applies the grants to a copy of {@code profile}. */
    PermissionProfile applyTo(PermissionProfile profile) {
        if (isEmpty()) {
            return profile;
        }
        PermissionProfile p = profile.withGrants(readPaths, writePaths);
        return network == null ? p : p.withNetwork(network);
    }
}
