package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.spi.host.QuotaVolumes;
import dev.codeexec.workspace.WorkspaceStorage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The sandbox's disk quota: each workspace is a {@linkplain QuotaVolumes volume} of its own, mounted in the engine's
 * state ({@code noexec} too where the kernel enforces a command allow list). The volume holds the workspace's content
 * ({@code ws}), bound on the workspace's directory, and beside it {@code pins}, where the hard links that pin a run's
 * files are made (see {@link LayoutPinning}): a hard link cannot leave its mount, and no program may see them.
 */
final class LoopVolumes implements WorkspaceStorage {

    /** The workspace's directory in its volume. */
    private static final String CONTENT = "ws";
    /** The directory of the runs' pinned file links in a volume. */
    private static final String PINS = "pins";

    private final QuotaVolumes volumes;

    private LoopVolumes(QuotaVolumes volumes) {
        this.volumes = volumes;
    }

    /**
     * The volumes of a new engine, or null for none.
     *
     * @param requested the builder's quota: null for {@link QuotaVolumes#DEFAULT_QUOTA} where this host can enforce
     *                  it (a warning where it cannot), 0 for none, otherwise that quota or a failure
     * @param sandboxed whether the engine manages a Linux sandbox (bubblewrap)
     * @param stateDir  the engine's state directory
     * @throws dev.codeexec.engine.UnsupportedCapabilityException when a quota was requested and this host cannot
     *                                                            enforce it
     */
    static LoopVolumes forEngine(Long requested, boolean sandboxed, Path stateDir) {
        return forEngine(requested, sandboxed, stateDir, false);
    }

    /**
     * As {@link #forEngine(Long, boolean, Path)}, the volumes mounted {@code noexec} when asked: nothing written to a
     * workspace can be executed, or mapped executable by the dynamic loader (see {@link ExecAllowList}).
     */
    static LoopVolumes forEngine(Long requested, boolean sandboxed, Path stateDir, boolean noexec) {
        return QuotaVolumes.forEngine("SandboxEngine", requested, quota -> {
            if (!sandboxed) {
                throw new CodeExecException("the engine manages no Linux sandbox with this profile or platform");
            }
            return new LoopVolumes(QuotaVolumes.probe(stateDir, quota, -1, noexec));
        }, "Run the engine as root on Linux", "docs/sandbox.md, Disk quota");
    }

    @Override
    public boolean enforcesQuota() {
        return true;
    }

    /** Mounts the workspace's volume in the engine's state and binds its content on {@code dir}. */
    @Override
    public void attach(Path dir, long maxBytes) {
        String name = dir.getFileName().toString();
        Path volume = volumes.mount(name, maxBytes);
        try {
            Files.createDirectory(volume.resolve(CONTENT));
            // Bubblewrap, as the sandbox user, reaches the pins; it cannot list them.
            Files.createDirectory(volume.resolve(PINS), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx--x--x")));
            volumes.bind(volume.resolve(CONTENT), dir);
        } catch (IOException | RuntimeException e) {
            detach(dir);
            throw new BackendUnavailableException("could not set up the workspace's volume (" + e.getMessage() + ")",
                    e);
        }
    }

    @Override
    public void detach(Path dir) {
        volumes.unmount(dir);
        volumes.release(dir.getFileName().toString());
    }

    /**
     * Where the pinned file links of one run of a workspace go: beside the workspace's content on its volume, reached
     * through the volume's own mount (a hard link cannot cross mounts, even of one file system); null when the
     * workspace has no volume of this engine (a host directory).
     */
    VolumePins pinsOf(Path workspaceRoot, String run) {
        String name = workspaceRoot.getFileName().toString();
        if (!volumes.holds(name)) {
            return null;
        }
        Path volume = volumes.mountPoint(name);
        return new VolumePins(workspaceRoot, volume.resolve(CONTENT), volume.resolve(PINS).resolve(run));
    }

    /**
     * The pinning of a run's files inside a workspace on a volume.
     *
     * @param workspace the workspace's root as programs and plans name it (the bind)
     * @param content   the same directory through the volume's own mount
     * @param dir       the run's directory of links on the volume
     */
    record VolumePins(Path workspace, Path content, Path dir) {
        /** The path of a file of the workspace through the volume's mount, where a link to it can be made. */
        Path onVolume(Path file) {
            return content.resolve(workspace.relativize(file));
        }
    }

    /** Releases the engine's lock; every workspace must be detached first. */
    void close() {
        volumes.close();
    }
}
