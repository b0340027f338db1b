package dev.codeexec.container;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.Container;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.SafeNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Workspace containers: the workspace-to-container map, a stopped container started again, cleanup, the sweeper of
 * containers a crashed process left, and the warm pool. {@link ContainerCreator} makes and removes the containers.
 *
 * <p>Every container carries {@link #LABEL_OWNER}, {@link #LABEL_ENGINE} (this engine instance), {@link #LABEL_WORKSPACE}
 * (the workspace id, or {@code pool} for a pooled one), {@link #LABEL_CREATED}, and the creating process
 * ({@link #LABEL_HOST}, {@link #LABEL_PID}), so {@code docker ps --filter label=dev.codeexec.owner} finds them all.
 */
final class ContainerWorkspaces implements WorkspaceManager {

    private static final Logger LOG = LoggerFactory.getLogger(ContainerWorkspaces.class);

    static final String LABEL_OWNER = "dev.codeexec.owner";
    static final String LABEL_ENGINE = "dev.codeexec.engine";
    static final String LABEL_WORKSPACE = "dev.codeexec.workspace";
    static final String LABEL_CREATED = "dev.codeexec.created";
    static final String LABEL_HOST = "dev.codeexec.host";
    static final String LABEL_PID = "dev.codeexec.pid";

    /** Where the workspace volume is mounted; the workspace and the runs' control files live on it. */
    static final String VOLUME = "/codeexec";
    /** The workspace root inside every container. */
    static final String ROOT = VOLUME + "/workspace";
    /** The runs' control directories (pid, stdin FIFO), outside the workspace. */
    static final String CONTROL = VOLUME + "/control";

    /** The user of each container's PID 1: {@code nobody}, never the runs' user, so no run may signal it. */
    static final String INIT_USER = "65534:65534";

    private final DockerConnection docker;
    private final ContainerSettings settings;
    private final String engineId;
    private final Instant engineStarted = Instant.now();
    private final Map<String, WorkspaceContainer> byWorkspace = new ConcurrentHashMap<>();
    private final Deque<WorkspaceContainer> pool = new ConcurrentLinkedDeque<>();
    private final ContainerCreator containers;
    private final ScheduledExecutorService poolFiller;
    private volatile boolean closed;

    /** The workspaces' volumes (their disk quota), or null when each container has an anonymous Docker volume. */
    private final ContainerVolumes volumes;
    /** The egress proxy the containers go out through, or null. */
    private final ContainerEgress egress;
    /** What ends before a workspace's container is removed (its Python kernel). */
    private final Consumer<Workspace> beforeCleanup;

    /** @param beforeCleanup called with a workspace before its container is removed (which happens even if it fails) */
    ContainerWorkspaces(DockerConnection docker, ContainerSettings settings, String engineId,
                        ContainerVolumes volumes, ContainerEgress egress, Consumer<Workspace> beforeCleanup) {
        this.docker = docker;
        this.beforeCleanup = beforeCleanup;
        this.volumes = volumes;
        this.egress = egress;
        this.settings = settings;
        this.engineId = engineId;
        this.containers = new ContainerCreator(docker, settings, engineId, volumes, egress);
        if (settings.poolSize() > 0) {
            this.poolFiller = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "codeexec-container-pool-" + engineId.substring(0, 8));
                t.setDaemon(true);
                return t;
            });
            long period = Math.max(1000, settings.poolIdle().toMillis() / 2);
            poolFiller.scheduleWithFixedDelay(this::tendPool, 0, period, TimeUnit.MILLISECONDS);
        } else {
            this.poolFiller = null;
        }
    }

    @Override
    public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
        long quota = policy == null ? 0 : policy.maxDiskBytes();
        if (quota > 0 && volumes == null) {
            throw new UnsupportedCapabilityException("this ContainerEngine cannot enforce WorkspacePolicy.maxDiskBytes "
                    + "(it has no disk quota: see docs/container.md, Disk quota); refusing to create the workspace");
        }
        docker.requireReachable();
        String id = SafeNames.label(execId, "ws", 40) + "-" + UUID.randomUUID().toString().substring(0, 8);
        // A pooled container keeps its "pool" label (labels cannot change); the engine maps it to the workspace.
        // Pooled containers have the default quota: a workspace with its own is created for it.
        WorkspaceContainer c = quota > 0 ? null : pool.pollFirst();
        if (c != null) {
            wakePool();
        } else {
            c = containers.create(id, quota);
        }
        byWorkspace.put(id, c);
        LOG.debug("workspace {} in container {}", id, c.id.substring(0, 12));
        return new Workspace(id, ROOT);
    }

    /** The container of a workspace of this engine, as it is known (see {@link #running} for one that runs). */
    WorkspaceContainer container(Workspace ws) {
        WorkspaceContainer c = byWorkspace.get(ws.id());
        if (c == null) {
            throw new WorkspaceGoneException("workspace '" + ws.id() + "' is not a live workspace of this engine");
        }
        return c;
    }

    /** Forgets a workspace whose container was removed outside the engine, with its volume of this host. */
    private WorkspaceGoneException gone(Workspace ws, WorkspaceContainer c) {
        if (byWorkspace.remove(ws.id(), c) && volumes != null) {
            volumes.removed(c.id);
        }
        return new WorkspaceGoneException("the container of workspace '" + ws.id() + "' and its files are gone "
                + "(removed outside the engine)");
    }

    /**
     * The container of a workspace, started again when it stopped (a Docker engine restart stops every container;
     * the container and its volume, so the workspace's files, remain). Only a container that is gone, with its
     * volume, is a gone workspace.
     *
     * @throws WorkspaceGoneException when the container no longer exists
     */
    WorkspaceContainer running(Workspace ws) {
        WorkspaceContainer c = container(ws);
        InspectContainerResponse.ContainerState state;
        try {
            state = docker.control().inspectContainerCmd(c.id).exec().getState();
        } catch (NotFoundException e) {
            throw gone(ws, c);
        } catch (RuntimeException e) {
            throw docker.translate(e, "inspect the workspace's container");
        }
        if (state != null && Boolean.TRUE.equals(state.getRunning()) && !Boolean.TRUE.equals(state.getPaused())) {
            return c;
        }
        synchronized (c) {
            try {
                if (state != null && Boolean.TRUE.equals(state.getPaused())) {
                    docker.control().unpauseContainerCmd(c.id).exec();
                } else {
                    docker.control().startContainerCmd(c.id).exec();
                }
                if (egress != null) {
                    egress.startForwarder(docker, c.id); // its processes, the forwarder among them, are gone
                }
                LOG.warn("workspace {}: its container had stopped (exit code {}, for example after a Docker engine "
                        + "restart) and was started again; its files are kept, the processes it ran are gone",
                        ws.id(), state == null ? null : state.getExitCodeLong());
            } catch (NotModifiedException e) {
                // Started meanwhile by another call.
            } catch (NotFoundException e) {
                throw gone(ws, c);
            } catch (RuntimeException e) {
                throw docker.translate(e, "start the workspace's stopped container again");
            }
        }
        return c;
    }

    @Override
    public void cleanup(Workspace ws) {
        try {
            beforeCleanup.accept(ws);
        } catch (RuntimeException e) {
            LOG.warn("workspace {}: its Python kernel did not stop cleanly: {}", ws.id(), e.getMessage());
        }
        WorkspaceContainer c = byWorkspace.remove(ws.id());
        try {
            if (c != null) {
                containers.remove(c.id);
            }
        } finally {
            if (egress != null) {
                egress.egress().closeWorkspace(ws.id());
            }
        }
    }

    // ------------------------------------------------------------------ warm pool

    private void wakePool() {
        if (poolFiller != null && !closed) {
            poolFiller.execute(this::tendPool);
        }
    }

    /** Drops pooled containers idle longer than the idle time, then fills the pool up to its size. */
    private synchronized void tendPool() {
        if (closed) {
            return;
        }
        try {
            Instant oldest = Instant.now().minus(settings.poolIdle());
            for (WorkspaceContainer c : List.copyOf(pool)) {
                if (c.created.isBefore(oldest) && pool.remove(c)) {
                    containers.remove(c.id);
                }
            }
            while (!closed && pool.size() < settings.poolSize()) {
                pool.addLast(containers.create("pool", 0));
            }
        } catch (RuntimeException e) {
            LOG.warn("could not fill the warm pool of workspace containers: {}", e.getMessage());
        }
    }

    /** Pooled containers ready now (for tests and metrics). */
    int pooled() {
        return pool.size();
    }

    // ------------------------------------------------------------------ sweeper

    /**
     * Removes containers that other engine instances created before this one started and whose creating process is
     * no longer alive on this host (a crashed JVM). Containers of live processes, of other hosts with no way to tell,
     * and of this engine are left alone.
     *
     * @return how many were removed
     */
    int sweepLeftovers() {
        List<Container> found;
        try {
            found = docker.control().listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(LABEL_OWNER, "langchain4j-codeexec")).exec();
        } catch (RuntimeException e) {
            throw docker.translate(e, "list workspace containers");
        }
        int removed = 0;
        String here = ContainerCreator.hostName();
        for (Container c : found) {
            Map<String, String> l = c.getLabels() == null ? Map.of() : c.getLabels();
            if (engineId.equals(l.get(LABEL_ENGINE))) {
                continue;
            }
            long created = parse(l.get(LABEL_CREATED), c.getCreated() * 1000);
            if (created >= engineStarted.toEpochMilli()) {
                continue;
            }
            boolean creatorAlive = here.equals(l.get(LABEL_HOST)) && Optional.ofNullable(l.get(LABEL_PID))
                    .map(p -> parse(p, -1)).filter(p -> p > 0).flatMap(ProcessHandle::of)
                    .map(ProcessHandle::isAlive).orElse(false);
            if (creatorAlive || !here.equals(l.get(LABEL_HOST))) {
                continue;
            }
            try {
                containers.remove(c.getId());
                removed++;
            } catch (RuntimeException e) {
                LOG.warn("could not remove a leftover workspace container: {}", e.getMessage());
            }
        }
        if (removed > 0) {
            LOG.info("removed {} workspace container(s) left by a process that is gone", removed);
        }
        return removed;
    }

    private static long parse(String s, long fallback) {
        try {
            return s == null ? fallback : Long.parseLong(s);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** Removes every container of this engine: workspaces and the pool. */
    void close() {
        closed = true;
        if (poolFiller != null) {
            poolFiller.shutdownNow();
            try {
                poolFiller.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        RuntimeException failure = null;
        List<String> ids = new ArrayList<>();
        byWorkspace.values().forEach(c -> ids.add(c.id));
        byWorkspace.clear();
        pool.forEach(c -> ids.add(c.id));
        pool.clear();
        try {
            docker.control().listContainersCmd().withShowAll(true).withLabelFilter(Map.of(LABEL_ENGINE, engineId))
                    .exec().forEach(c -> {
                        if (!ids.contains(c.getId())) {
                            ids.add(c.getId());
                        }
                    });
        } catch (RuntimeException e) {
            failure = docker.translate(e, "list this engine's containers");
        }
        for (String id : ids) {
            try {
                containers.remove(id);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    Duration uptime() {
        return Duration.between(engineStarted, Instant.now());
    }
}
