package dev.codeexec.container;

import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Volume;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressBridge;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The egress policy on containers: a workspace's container has no network at all ({@code --network none}: loopback
 * only, no DNS), and its one way out is the engine's egress proxy, whose per-workspace socket is bound into it at
 * {@value #DIR}. When the container starts, the {@link EgressBridge} runs in it as root (a user the programs are not,
 * so they cannot stop it) and leaves a forwarder on {@code 127.0.0.1:3128}, where the runs' environment points every
 * common client. A program may also connect to the socket itself: every connection is decided by the proxy on its
 * own terms, whichever process asked.
 */
final class ContainerEgress implements AutoCloseable {

    /** Where a workspace's gate directory is bound in its container. */
    static final String DIR = "/run/codeexec-egress";
    /** Who runs the forwarder: root without capabilities, a user no program runs as. */
    static final String FORWARDER_USER = "0:0";

    private final WorkspaceEgress egress;

    private ContainerEgress(WorkspaceEgress egress) {
        this.egress = egress;
    }

    /**
     * The engine's egress after checking that it can be enforced; null without a policy.
     *
     * @throws InvalidSpecException           with the network on or a warm pool
     * @throws UnsupportedCapabilityException when the Docker engine is not on this host
     */
    static ContainerEgress forEngine(EgressPolicy policy, EgressProxy.Builder proxy, boolean network, int poolSize,
                                     URI dockerHost) {
        if (policy == null) {
            return null;
        }
        if (network) {
            throw new InvalidSpecException("an egress policy replaces network(true): the containers get no network "
                    + "and reach the hosts the policy allows through the engine's proxy");
        }
        if (poolSize > 0) {
            throw new InvalidSpecException("an egress policy needs each workspace's container made for it (its "
                    + "gate is bound in when it is created): use no warm pool");
        }
        if (!"unix".equals(dockerHost.getScheme()) || !Files.exists(Path.of(dockerHost.getPath()))) {
            throw new UnsupportedCapabilityException("ContainerEngine cannot enforce an egress policy here: the "
                    + "Docker engine is not on this host (" + dockerHost.getScheme() + " endpoint), so the proxy's "
                    + "socket cannot be bound into its containers");
        }
        return new ContainerEgress(WorkspaceEgress.start(policy, proxy.build()));
    }

    /** The engine's egress: its gates, their runs, narrowing. */
    WorkspaceEgress egress() {
        return egress;
    }

    /** The bind that shows a workspace's container its gate (opened now). */
    Bind bind(String workspaceId) {
        return new Bind(egress.directory(workspaceId).toString(), new Volume(DIR), AccessMode.ro);
    }

    /**
     * Starts the forwarder in a workspace's running container; called when it is created and whenever it was started
     * again.
     *
     * @throws BackendUnavailableException when the image cannot run it (no {@code python3}) or the socket is not
     *                                     visible in the container
     */
    void startForwarder(DockerConnection docker, String containerId) {
        Execs.Result r = Execs.run(docker, containerId, FORWARDER_USER,
                EgressBridge.argv("python3", DIR + "/" + WorkspaceEgress.SOCKET, null, List.of()));
        if (r.exitCode() != 0 || !r.stdout().strip().equals(EgressBridge.READY)) {
            String why = r.stderr().startsWith(EgressBridge.MARKER)
                    ? r.stderr().strip().substring(EgressBridge.MARKER.length())
                    : "exit code " + r.exitCode() + (r.exitCode() == 127 ? ": the image has no python3" : "")
                            + " " + r.stderr().strip();
            throw new BackendUnavailableException("the egress forwarder could not start in the workspace's "
                    + "container (" + why.strip() + "); the image needs python3 for an egress policy");
        }
    }




    @Override
    public void close() {
        egress.close();
    }
}
