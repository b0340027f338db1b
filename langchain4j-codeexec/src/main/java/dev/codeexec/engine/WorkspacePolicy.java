package dev.codeexec.engine;

/**
 * How a workspace is created.
 *
 * @param maxDiskBytes the most bytes the workspace may hold; 0 means no limit. A backend that cannot enforce a
 *                     non-zero limit refuses with {@link UnsupportedCapabilityException} (see
 *                     {@link Capabilities#maxDiskBytes()}).
 */
public record WorkspacePolicy(long maxDiskBytes) {

    /** No disk limit. */
    public static final WorkspacePolicy DEFAULT = new WorkspacePolicy(0);

    public WorkspacePolicy {
        if (maxDiskBytes < 0) {
            throw new InvalidSpecException("maxDiskBytes (" + maxDiskBytes + ") must not be negative");
        }
    }
}
