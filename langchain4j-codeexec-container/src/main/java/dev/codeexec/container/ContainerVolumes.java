package dev.codeexec.container;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.spi.host.QuotaVolumes;
import dev.codeexec.workspace.FileTrees;
import dev.codeexec.workspace.WorkspaceSpace;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The container engine's disk quota: each workspace container's {@code /codeexec} (the workspace and the runs' files)
 * is a {@linkplain QuotaVolumes volume} on this host, bound into the container, so it survives a stopped or restarted
 * container like Docker's own volumes do. The volume's reserved blocks serve root and the engine's helper group, never
 * a run (each has a group of its own), so the engine's bookkeeping in a full workspace still finds room.
 *
 * <p>Needs the Docker engine on this host (a UNIX socket: a bind mount names a path of the engine's host) and the JVM
 * running as root; each container checks that the engine sees the volume ({@link #requireSeen}).
 */
final class ContainerVolumes {

    private final Path stateDir;
    private final QuotaVolumes volumes;
    /** Container id to the name of its volume. */
    private final Map<String, String> byContainer = new ConcurrentHashMap<>();

    private ContainerVolumes(Path stateDir, QuotaVolumes volumes) {
        this.stateDir = stateDir;
        this.volumes = volumes;
    }

    /**
     * The volumes of a new engine, or null for none.
     *
     * @param requested  the builder's quota: null for {@link QuotaVolumes#DEFAULT_QUOTA} where this host can enforce
     *                   it (a warning where it cannot), 0 for none, otherwise that quota or a failure
     * @param dockerHost where the Docker engine is
     * @param helperGid  the group of the engine's helper processes in the containers, which may use the reserve
     * @throws dev.codeexec.engine.UnsupportedCapabilityException when a quota was requested and cannot be enforced here
     */
    static ContainerVolumes forEngine(Long requested, URI dockerHost, int helperGid) {
        return QuotaVolumes.forEngine("ContainerEngine", requested, quota -> {
            if (!"unix".equals(dockerHost.getScheme()) || !Files.exists(Path.of(dockerHost.getPath()))) {
                throw new CodeExecException("the Docker engine is not on this host (" + dockerHost.getScheme()
                        + " endpoint): a volume of this host cannot be bound into its containers");
            }
            Path state;
            try {
                state = Files.createTempDirectory("codeexec-container-");
            } catch (IOException e) {
                throw new CodeExecException("cannot create the directory of the workspace volumes: " + e, e);
            }
            try {
                return new ContainerVolumes(state, QuotaVolumes.probe(state, quota, helperGid, false));
            } catch (RuntimeException e) {
                FileTrees.deleteTree(state);
                throw e;
            }
        }, "Run the engine as root beside its Docker engine", "docs/container.md, Disk quota");
    }

    /** Creates the volume of a container about to be created; returns the host directory to bind. */
    Path create(String name, long maxBytes) {
        return volumes.mount(name, maxBytes);
    }

    /** Records the container that binds the volume {@code name}. */
    void bound(String containerId, String name) {
        byContainer.put(containerId, name);
    }

    /**
     * Fails when the Docker engine did not see the volume: the layout the engine copied into the container must be
     * on the host side of the bind (a Docker engine behind a forwarded socket binds a directory of its own host).
     */
    void requireSeen(String name) {
        if (!Files.isDirectory(volumes.mountPoint(name).resolve("workspace"))) {
            throw new CodeExecException("the Docker engine does not see this host's directories (is it on another "
                    + "host?): the workspace's volume cannot be bound; build the engine with diskQuota(0)");
        }
    }

    /** Releases the volume of a removed container, if it has one. */
    void removed(String containerId) {
        String name = byContainer.remove(containerId);
        if (name != null) {
            volumes.release(name);
        }
    }

    /** Releases a volume whose container was never created. */
    void release(String name) {
        volumes.release(name);
    }

    /**
     * Refuses a write of {@code bytes} for the model into a container's workspace that would not fit in what its
     * runs may use ({@link WorkspaceSpace#requireRoom}); nothing for a container without a volume.
     */
    void requireRoom(String containerId, long bytes) {
        String name = byContainer.get(containerId);
        if (name != null) {
            WorkspaceSpace.requireRoom(volumes.mountPoint(name), bytes);
        }
    }

    /**
     * Releases every volume still held (their containers are removed by now, or were removed outside the engine),
     * then the lock and the state directory.
     */
    void close() {
        RuntimeException failure = null;
        for (String id : List.copyOf(byContainer.keySet())) {
            try {
                removed(id);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        volumes.close();
        if (failure != null) {
            throw failure;
        }
        FileTrees.deleteTree(stateDir);
    }
}
