package dev.codeexec.network;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An engine's egress: its policy, the proxy it owns, and one {@link EgressGate} per workspace, each on a Unix-domain
 * socket {@value #SOCKET} in a directory of its own that the engine shows its workspace's programs (and nothing
 * else of the host). Gates open with a workspace's first run and close with the workspace; when the last run of a
 * workspace ends, its connections end too.
 *
 * <p>The programs that must reach a socket may run as another user than the engine, and bubblewrap opens what it
 * binds as that user: so the directories are traversable but not listable (mode 0711), each gate's directory has a
 * random name nobody can list, and its socket can be connected to by whoever finds it (mode 0666). Thread-safe.
 */
public final class WorkspaceEgress implements AutoCloseable {

    /** The socket's name in a gate's directory. */
    public static final String SOCKET = "proxy.sock";

    private static final Logger LOG = LoggerFactory.getLogger(WorkspaceEgress.class);

    private final EgressPolicy policy;
    private final EgressProxy proxy;
    private final Path root;
    private final Map<String, Entry> gates = new ConcurrentHashMap<>();
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
    private volatile boolean closed;

    private static final class Entry {
        volatile EgressGate gate;
        final Path dir;
        int runs;

        Entry(EgressGate gate, Path dir) {
            this.gate = gate;
            this.dir = dir;
        }
    }

    private WorkspaceEgress(EgressPolicy policy, EgressProxy proxy, Path root) {
        this.policy = policy;
        this.proxy = proxy;
        this.root = root;
    }

    /**
     * Starts an engine's egress with its own proxy (closed with it) in a new private directory of this host's
     * temporary directory (short, since a socket's path is limited to about 100 bytes).
     *
     * @throws BackendUnavailableException when the directory cannot be made
     */
    public static WorkspaceEgress start(EgressPolicy policy, EgressProxy proxy) {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(proxy, "proxy");
        try {
            Path root = Files.createTempDirectory("codeexec-egress-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
            return new WorkspaceEgress(policy, proxy, root);
        } catch (IOException | UnsupportedOperationException e) {
            proxy.close();
            throw new BackendUnavailableException("cannot create the egress proxy's directory: " + e, e);
        }
    }

    /** Adds a listener for every workspace's connection events from now on. */
    public void addListener(EgressListener listener) {
        proxy.addListener(listener);
    }

    /** The engine's policy (before any workspace's narrowing). */
    public EgressPolicy policy() {
        return policy;
    }

    /**
     * The directory holding a workspace's gate socket {@value #SOCKET}, opening the gate on first use.
     *
     * @throws BackendUnavailableException when the gate cannot be opened, or the engine's egress is closed
     */
    public Path directory(String workspaceId) {
        return entry(workspaceId).dir;
    }

    /** A workspace's gate, opened on first use (see {@link #directory}). */
    public EgressGate gate(String workspaceId) {
        return entry(workspaceId).gate;
    }

    private Entry entry(String workspaceId) {
        Objects.requireNonNull(workspaceId, "workspaceId");
        synchronized (gates) {
            if (closed) {
                throw new BackendUnavailableException("the engine's egress proxy is closed");
            }
            Entry e = gates.get(workspaceId);
            if (e != null && !e.gate.isClosed()) {
                return e;
            }
            // A gate closed under a live workspace (closed by hand, or its socket failed) opens again, in the same
            // directory that running sandboxes see, with the policy it had; what its approver allowed is asked again.
            Path dir = e != null ? e.dir : root.resolve(unguessableName());
            try {
                if (e == null) {
                    Files.createDirectory(dir);
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
                }
                Path socket = dir.resolve(SOCKET);
                EgressGate gate = proxy.openUnix(workspaceId, e != null ? e.gate.policy() : policy, socket);
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
                if (e == null) {
                    e = new Entry(gate, dir);
                } else {
                    e.gate = gate;
                }
            } catch (IOException | RuntimeException ex) {
                throw new BackendUnavailableException("cannot open the egress proxy's socket for workspace "
                        + workspaceId + ": " + ex, ex);
            }
            gates.put(workspaceId, e);
            return e;
        }
    }

    private static String unguessableName() {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        return java.util.HexFormat.of().formatHex(b);
    }

    /**
     * Narrows a workspace's policy for the rest of its life; a workspace can only tighten the engine's policy.
     */
    public void narrow(String workspaceId, EgressPolicy narrower) {
        gate(workspaceId).narrow(narrower);
    }

    /**
     * Counts a run of a workspace from now until the returned handle is closed; when the last run of the workspace
     * ends, its open connections end. Opens the gate on first use.
     */
    public AutoCloseable run(String workspaceId) {
        Entry e = entry(workspaceId);
        synchronized (e) {
            e.runs++;
        }
        return new AutoCloseable() {
            private boolean done;

            @Override
            public void close() {
                synchronized (e) {
                    if (done) {
                        return;
                    }
                    done = true;
                    if (--e.runs == 0) {
                        e.gate.endConnections();
                    }
                }
            }
        };
    }

    /** Closes a workspace's gate (its connections end) and removes its directory. */
    public void closeWorkspace(String workspaceId) {
        Entry e;
        synchronized (gates) {
            e = gates.remove(workspaceId);
        }
        if (e != null) {
            e.gate.close();
            delete(e.dir);
        }
    }

    private static void delete(Path dir) {
        try {
            Files.deleteIfExists(dir.resolve(SOCKET));
            Files.deleteIfExists(dir);
        } catch (IOException ex) {
            LOG.warn("could not remove the egress directory {}: {}", dir, ex.toString());
        }
    }

    /** Closes every gate and the proxy, and removes the directories. */
    @Override
    public void close() {
        synchronized (gates) {
            closed = true;
        }
        for (String id : gates.keySet().toArray(String[]::new)) {
            closeWorkspace(id);
        }
        proxy.close();
        delete(root);
    }
}
