package dev.codeexec.container;

import static dev.codeexec.container.ContainerWorkspaces.CONTROL;
import static dev.codeexec.container.ContainerWorkspaces.INIT_USER;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_CREATED;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_ENGINE;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_HOST;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_OWNER;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_PID;
import static dev.codeexec.container.ContainerWorkspaces.LABEL_WORKSPACE;
import static dev.codeexec.container.ContainerWorkspaces.VOLUME;

import com.github.dockerjava.api.command.CreateContainerResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import com.github.dockerjava.api.model.Volume;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.workspace.WorkspaceLayout;
import dev.codeexec.workspace.spi.CheckedTar;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates and removes workspace containers: the hardened settings (no capabilities, {@code no-new-privileges}, no
 * network unless asked, PID 1 as {@code nobody}, the container's limits and rlimits), the labels that let leftovers
 * be found ({@link ContainerWorkspaces}), the workspace layout, and the container's volume of this host (its disk
 * quota) or egress socket, when the engine has them. Thread-safe: it keeps no state of its own.
 *
 * @param engineId the engine instance, on every container's labels
 * @param volumes  the workspaces' volumes (their disk quota), or null when each container has an anonymous Docker
 *                 volume
 * @param egress   the egress proxy the containers go out through, or null
 */
record ContainerCreator(DockerConnection docker, ContainerSettings settings, String engineId, ContainerVolumes volumes,
                        ContainerEgress egress) {

    private static final Logger LOG = LoggerFactory.getLogger(ContainerCreator.class);

    /**
     * Creates and starts one container with the standard layout; with a disk quota ({@code maxBytes}, 0 for the
     * default), its {@code /codeexec} is a volume of this host.
     */
    WorkspaceContainer create(String workspaceLabel, long maxBytes) {
        Map<String, String> labels = new HashMap<>();
        labels.put(LABEL_OWNER, "langchain4j-codeexec");
        labels.put(LABEL_ENGINE, engineId);
        labels.put(LABEL_WORKSPACE, workspaceLabel);
        labels.put(LABEL_CREATED, Long.toString(System.currentTimeMillis()));
        labels.put(LABEL_HOST, hostName());
        labels.put(LABEL_PID, Long.toString(ProcessHandle.current().pid()));
        HostConfig host = HostConfig.newHostConfig()
                .withNetworkMode(settings.network())
                .withCapDrop(Capability.ALL)
                .withSecurityOpts(List.of("no-new-privileges"))
                .withPrivileged(false)
                .withReadonlyRootfs(settings.readOnlyRootFilesystem())
                .withInit(false);
        Map<String, String> tmpfs = new HashMap<>();
        if (settings.readOnlyRootFilesystem()) {
            tmpfs.put("/tmp", "rw,nosuid,nodev,size=64m");
        }
        String name = "codeexec-" + engineId.substring(0, 8) + "-" + UUID.randomUUID().toString().substring(0, 12);
        List<Bind> binds = new ArrayList<>();
        if (egress != null) {
            binds.add(egress.bind(workspaceLabel));
        }
        if (volumes != null) {
            binds.add(new Bind(volumes.create(name, maxBytes).toString(), new Volume(VOLUME)));
            // The runs' control files never need the workspace's room: a full workspace must not stop the run that
            // frees it.
            tmpfs.put(CONTROL, "rw,nosuid,nodev,noexec,size=1m,mode=0700,uid=" + settings.uid() + ",gid="
                    + settings.gid());
        }
        if (!binds.isEmpty()) {
            host.withBinds(binds);
        }
        if (!tmpfs.isEmpty()) {
            host.withTmpFs(tmpfs);
        }
        if (settings.memoryBytes() != null) {
            host.withMemory(settings.memoryBytes()).withMemorySwap(settings.memoryBytes());
        }
        if (settings.pids() != null) {
            host.withPidsLimit(settings.pids());
        }
        if (settings.nanoCpus() != null) {
            host.withNanoCPUs(settings.nanoCpus());
        }
        List<Ulimit> rlimits = new ArrayList<>();
        if (settings.openFilesRlimit() != null) {
            rlimits.add(new Ulimit("nofile", settings.openFilesRlimit(), settings.openFilesRlimit()));
        }
        if (settings.processesRlimit() != null) {
            rlimits.add(new Ulimit("nproc", settings.processesRlimit(), settings.processesRlimit()));
        }
        if (!rlimits.isEmpty()) {
            host.withUlimits(rlimits);
        }
        if (settings.runtime() != null) {
            host.withRuntime(settings.runtime());
        }
        String id = null;
        try {
            CreateContainerResponse r = docker.control().createContainerCmd(settings.image())
                    .withName(name)
                    .withLabels(labels)
                    .withCmd("sh", "-c", ExecScripts.INIT)
                    .withEntrypoint(List.of())
                    .withUser(INIT_USER)
                    .withWorkingDir("/")
                    .withEnv(List.of())
                    .withNetworkDisabled("none".equals(settings.network()))
                    .withVolumes(new Volume(VOLUME))
                    .withHostConfig(host)
                    .exec();
            id = r.getId();
            if (volumes != null) {
                volumes.bound(id, name);
            }
            docker.control().startContainerCmd(id).exec();
            putLayout(id);
            if (egress != null) {
                egress.startForwarder(docker, id);
            }
            if (volumes != null) {
                volumes.requireSeen(name);
            }
            return new WorkspaceContainer(id, Instant.now(), settings.memoryBytes(), settings.pids());
        } catch (NotFoundException e) {
            removeQuietly(id, name);
            throw new BackendUnavailableException("the workspace image '" + settings.image() + "' is not present "
                    + "on the Docker engine; build or load it there (the engine never pulls)", e);
        } catch (RuntimeException e) {
            removeQuietly(id, name);
            throw docker.translate(e, "create a workspace container");
        }
    }

    /** The workspace layout and the control directory, owned by the workspace user, in one archive. */
    private void putLayout(String id) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (CheckedTar.Writer tar = new CheckedTar.Writer(bytes, settings.uid(), settings.gid())) {
            List<String> dirs = new ArrayList<>();
            dirs.add("workspace");
            for (String d : WorkspaceLayout.DIRECTORIES) {
                dirs.add("workspace/" + d);
            }
            dirs.add("control");
            Instant now = Instant.now();
            for (String d : dirs) {
                tar.directory(d, d.equals("control") ? 0700 : 0755, now);
            }
        } catch (IOException e) {
            throw new CodeExecException("could not build the workspace layout", e);
        }
        docker.control().copyArchiveToContainerCmd(id).withRemotePath(VOLUME)
                .withTarInputStream(new ByteArrayInputStream(bytes.toByteArray())).exec();
    }

    /** Removes a container with its volume (anonymous, or of this host); a missing one is fine. */
    void remove(String id) {
        try {
            docker.control().removeContainerCmd(id).withForce(true).withRemoveVolumes(true).exec();
        } catch (NotFoundException e) {
            // Already gone.
        } catch (RuntimeException e) {
            throw docker.translate(e, "remove a workspace container");
        } finally {
            // Its files go with it; a container that could not be removed keeps its own mount of the volume.
            if (volumes != null) {
                volumes.removed(id);
            }
        }
    }

    /** After a failed start: removes the container (if it was created) and its volume of this host. */
    private void removeQuietly(String id, String name) {
        try {
            if (id != null) {
                remove(id);
            }
            if (volumes != null) {
                volumes.release(name);
            }
        } catch (RuntimeException e) {
            LOG.warn("could not remove a container after a failed start: {}", e.getMessage());
        }
    }

    /** This host's name, as the labels record it. */
    static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
