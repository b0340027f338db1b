package dev.codeexec.spi;

import dev.codeexec.engine.InvalidSpecException;

/**
 * The builder of an engine that can give each workspace a volume of its own, bounded by a disk quota (the sandbox,
 * the container engine). Engines without volumes (local, Jupyter, E2B) do not implement it: their
 * {@code describe().diskQuota()} is false.
 *
 * <p>A builder keeps the quota set (null until set) and its engine resolves the default: 1 GiB where the host can
 * enforce it, none elsewhere, with a warning.
 *
 * @param <B> the backend's builder type
 */
public interface DiskQuotaBuilder<B> {

    /**
     * The disk quota of each workspace whose {@link dev.codeexec.engine.WorkspacePolicy#maxDiskBytes()} sets none:
     * what its programs may write, staged inputs and the model's files included. Default 1 GiB where the host can
     * enforce it (the builder's class documentation says where), none elsewhere, with a warning; 0 for none. A quota
     * set here where it cannot be enforced fails the build. Each workspace is then a file system of its own (a
     * sparse, loop-mounted ext4 image on the engine's host); see the backend's page under {@code docs/}, section Disk
     * quota.
     *
     * @throws InvalidSpecException when {@code bytes} is negative
     */
    B diskQuota(long bytes);

    /**
     * Checks a quota given to {@link #diskQuota(long)}: returns it, or throws for a negative one.
     *
     * @throws InvalidSpecException when {@code bytes} is negative
     */
    static long requireValid(long bytes) {
        if (bytes < 0) {
            throw new InvalidSpecException("diskQuota (" + bytes + ") must not be negative");
        }
        return bytes;
    }
}
