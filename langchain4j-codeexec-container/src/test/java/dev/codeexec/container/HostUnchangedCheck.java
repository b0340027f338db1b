package dev.codeexec.container;

import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Network;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs around every test class of this module (registered by service loading, {@code junit-platform.properties})
 * and fails the class that leaves the host changed:
 *
 * <ul>
 *   <li>every network interface of the host's network namespace that was there before (for example the host
 *       engine's {@code docker0}) is still there;</li>
 *   <li>every network and every container of the host's Docker engine that was there before is still there
 *       (workspace containers of other engines, labelled {@code dev.codeexec.owner}, come and go with their owners
 *       and are not compared);</li>
 *   <li>no workspace container created by this test JVM is left.</li>
 * </ul>
 *
 * <p>What others add meanwhile (interfaces, containers of other builds on the same machine) is not a change this
 * module made, so only what disappeared, and what this JVM left, counts. Without a Docker engine only the interfaces
 * are compared.
 */
public final class HostUnchangedCheck implements BeforeAllCallback, AfterAllCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(HostUnchangedCheck.class);

    /** What the check compares. */
    record Snapshot(Set<String> interfaces, Map<String, String> networks, Map<String, String> containers) {
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NS).put("before", snapshot());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Snapshot before = context.getStore(NS).get("before", Snapshot.class);
        if (before == null) {
            return;
        }
        String changes = changes(before, snapshot(), leftByThisJvm());
        if (!changes.isEmpty()) {
            throw new AssertionError(context.getDisplayName() + " changed the host: " + changes);
        }
    }

    /** The interfaces of this network namespace and, when an engine answers, its networks and containers. */
    static Snapshot snapshot() {
        Set<String> interfaces;
        try (Stream<Path> s = Files.list(Path.of("/sys/class/net"))) {
            interfaces = s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> networks = new TreeMap<>();
        Map<String, String> containers = new TreeMap<>();
        try (DockerConnection d = DockerConnection.open(null, null, null)) {
            for (Network n : d.control().listNetworksCmd().exec()) {
                networks.put(n.getId(), n.getName());
            }
            for (Container c : d.control().listContainersCmd().withShowAll(true).exec()) {
                if (c.getLabels() != null && c.getLabels().containsKey(ContainerWorkspaces.LABEL_OWNER)) {
                    // Workspace containers of other engines come and go with them (other builds, the sweeper).
                    continue;
                }
                containers.put(c.getId(), c.getNames() == null || c.getNames().length == 0 ? c.getId()
                        : c.getNames()[0]);
            }
        } catch (RuntimeException e) {
            // No engine here: only the interfaces count.
        }
        return new Snapshot(interfaces, networks, containers);
    }

    /** Workspace containers on the host engine labelled with this JVM's pid. */
    static Set<String> leftByThisJvm() {
        try (DockerConnection d = DockerConnection.open(null, null, null)) {
            return d.control().listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of(ContainerWorkspaces.LABEL_PID,
                            Long.toString(ProcessHandle.current().pid())))
                    .exec().stream().map(c -> c.getId().substring(0, 12)).collect(Collectors.toCollection(TreeSet::new));
        } catch (RuntimeException e) {
            return Set.of();
        }
    }

    /** What vanished between two snapshots, and what this JVM left; empty when nothing. */
    static String changes(Snapshot before, Snapshot after, Set<String> left) {
        StringBuilder b = new StringBuilder();
        Set<String> gone = new TreeSet<>(before.interfaces());
        gone.removeAll(after.interfaces());
        if (!gone.isEmpty()) {
            b.append("network interfaces gone: ").append(gone).append("; ");
        }
        Set<String> nets = new TreeSet<>();
        before.networks().forEach((id, name) -> {
            if (!after.networks().containsKey(id)) {
                nets.add(name);
            }
        });
        if (!nets.isEmpty()) {
            b.append("Docker networks gone: ").append(nets).append("; ");
        }
        Set<String> containers = new TreeSet<>();
        before.containers().forEach((id, name) -> {
            if (!after.containers().containsKey(id)) {
                containers.add(name);
            }
        });
        if (!containers.isEmpty()) {
            b.append("Docker containers gone: ").append(containers).append("; ");
        }
        if (!left.isEmpty()) {
            b.append("workspace containers of this test JVM left: ").append(left).append("; ");
        }
        return b.toString();
    }
}
