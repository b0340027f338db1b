package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Workspaces that are directories under one host base directory, shared by the local and sandbox backends.
 * Each workspace is {@code <base>/<label>-<random>} with mode 0700 and the standard {@link WorkspaceLayout}.
 * {@link #close()} removes every workspace this manager created.
 */
public final class HostWorkspaceManager implements WorkspaceManager, AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path baseDir;
    private final WorkspaceStorage storage;
    private final Set<String> created = ConcurrentHashMap.newKeySet();

    /**
     * Workspaces as plain directories ({@link WorkspaceStorage#DIRECTORIES}): no disk quota.
     *
     * @param baseDir the directory that holds the workspaces; created (mode 0700) when missing
     */
    public HostWorkspaceManager(Path baseDir) {
        this(baseDir, WorkspaceStorage.DIRECTORIES);
    }

    /**
     * @param baseDir the directory that holds the workspaces; created (mode 0700) when missing
     * @param storage what holds each workspace's files
     */
    public HostWorkspaceManager(Path baseDir, WorkspaceStorage storage) {
        this.storage = Objects.requireNonNull(storage, "storage");
        try {
            Files.createDirectories(baseDir);
            this.baseDir = baseDir.toRealPath();
            FileTrees.restrictToOwner(this.baseDir);
        } catch (IOException e) {
            throw new CodeExecException("cannot create the workspace base directory: " + e.getMessage(), e);
        }
    }

    /** The real path of the base directory. */
    public Path baseDir() {
        return baseDir;
    }

    @Override
    public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
        WorkspacePolicy p = policy == null ? WorkspacePolicy.DEFAULT : policy;
        if (p.maxDiskBytes() > 0 && !storage.enforcesQuota()) {
            throw new UnsupportedCapabilityException("host-directory workspaces cannot enforce maxDiskBytes ("
                    + p.maxDiskBytes() + "); refusing to create an unlimited workspace. Use a backend that "
                    + "enforces disk limits, or set maxDiskBytes to 0.");
        }
        String id = label(execId) + "-" + HexFormat.of().formatHex(randomBytes());
        Path dir = baseDir.resolve(id);
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                    "rwx------")));
        } catch (UnsupportedOperationException e) {
            try {
                Files.createDirectory(dir);
            } catch (IOException ex) {
                throw new CodeExecException("cannot create workspace: " + ex.getClass().getSimpleName(), ex);
            }
        } catch (IOException e) {
            throw new CodeExecException("cannot create workspace: " + e.getClass().getSimpleName(), e);
        }
        try {
            storage.attach(dir, p.maxDiskBytes());
        } catch (RuntimeException e) {
            FileTrees.deleteTree(dir);
            throw e;
        }
        try {
            WorkspaceLayout.create(dir);
        } catch (RuntimeException e) {
            remove(dir);
            throw e;
        }
        created.add(id);
        return new Workspace(id, dir.toString());
    }

    @Override
    public void cleanup(Workspace workspace) {
        Path dir = hostPath(workspace);
        created.remove(workspace.id());
        remove(dir);
    }

    /** Releases a workspace's storage, then deletes what is left of its directory. */
    private void remove(Path dir) {
        storage.detach(dir);
        FileTrees.deleteTree(dir);
    }

    /**
     * The host directory of a workspace of this manager.
     *
     * @throws InvalidSpecException when the workspace does not belong to this manager
     */
    public Path hostPath(Workspace workspace) {
        Path dir = Path.of(workspace.path()).toAbsolutePath().normalize();
        if (dir.getParent() == null || !dir.getParent().equals(baseDir) || !dir.getFileName().toString().equals(workspace.id())) {
            throw new InvalidSpecException("workspace '" + workspace.id() + "' does not belong to this engine");
        }
        return dir;
    }

    /** Removes every workspace this manager created and still holds. */
    @Override
    public void close() {
        RuntimeException first = null;
        for (String id : Set.copyOf(created)) {
            try {
                remove(baseDir.resolve(id));
                created.remove(id);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * A readable, safe label from a caller's execution id ({@link SafeNames#label}): {@code [A-Za-z0-9_-]}, at most 40
     * characters, {@code ws} for none. The random suffix makes the directory unique.
     */
    static String label(String execId) {
        return SafeNames.label(execId, "ws", 40);
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        return b;
    }
}
