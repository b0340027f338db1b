package dev.codeexec.sandbox;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.workspace.FileTrees;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox engine's directories on the host: the root ({@code 0700}), its {@code workspaces/}, and
 * {@code state/} ({@code 0700}: the runs' directories, the volumes, the engine's bookkeeping). The root is a new
 * temporary directory unless the operator gave one; a root the engine created is removed on close, a given one keeps
 * everything but the engine's state and workspaces. No sandbox sees any of it except its own workspace.
 */
final class SandboxRoot {

    private static final Logger LOG = LoggerFactory.getLogger(SandboxRoot.class);

    /** The root, real path. */
    final Path root;
    /** The engine's state. */
    final Path state;
    /** The runs' private directories, in the state. */
    final Path runs;
    private final boolean owned;

    private SandboxRoot(Path root, boolean owned) {
        this.root = root;
        this.state = root.resolve("state");
        this.runs = state.resolve("runs");
        this.owned = owned;
    }

    /**
     * Creates (or takes) the root and its state directories.
     *
     * @param given the operator's root, or null for a new temporary directory
     */
    static SandboxRoot create(Path given) {
        try {
            Path root = given == null ? Files.createTempDirectory("codeexec-sandbox-") : given;
            Files.createDirectories(root);
            restrict(root);
            SandboxRoot r = new SandboxRoot(root.toRealPath(), given == null);
            Files.createDirectories(r.state);
            restrict(r.state);
            Files.createDirectories(r.runs);
            return r;
        } catch (IOException e) {
            throw new CodeExecException("cannot create the sandbox root directory: " + e.getMessage(), e);
        }
    }

    /** Where the workspaces live. */
    Path workspaces() {
        return root.resolve("workspaces");
    }

    /** After a failed start: removes what the engine created, logging a failure. */
    void removeQuietly() {
        try {
            FileTrees.deleteTree(owned ? root : state);
        } catch (RuntimeException e) {
            LOG.warn("could not remove the sandbox root: {}", e.toString());
        }
    }

    /** On close, once the workspaces were removed: the root the engine created, or the state and workspaces' one. */
    void remove() {
        if (owned) {
            FileTrees.deleteTree(root);
            return;
        }
        FileTrees.deleteTree(state);
        try {
            Files.deleteIfExists(workspaces());
        } catch (IOException e) {
            throw new CodeExecException("could not remove the sandbox root", e);
        }
    }

    /**
     * An operator's directory to run in ({@link SandboxEngine#runInDirectory}), as a real path.
     *
     * @throws InvalidSpecException     when it does not exist or is not a directory
     * @throws PolicyViolationException when it is the host root, contains the sandbox root or lies in it
     */
    Path requireOperatorDirectory(Path directory) {
        Path dir;
        try {
            dir = directory.toRealPath();
        } catch (IOException e) {
            throw new InvalidSpecException("workspace directory '" + directory + "' does not exist");
        }
        if (!Files.isDirectory(dir)) {
            throw new InvalidSpecException("workspace directory '" + directory + "' is not a directory");
        }
        if (dir.getParent() == null || root.startsWith(dir) || dir.startsWith(root)) {
            throw new PolicyViolationException("workspace directory '" + directory + "' would expose the host root "
                    + "or the sandbox root; choose a dedicated directory");
        }
        return dir;
    }

    /**
     * Creates the standard layout ({@code work/}, {@code out/}, …) in an operator's directory, its directories given
     * to {@code owner}, and returns the directory's resolver.
     */
    static PathResolver layOut(Path dir, SandboxUser owner) {
        PathResolver resolver = new PathResolver(dir);
        for (String d : WorkspaceLayout.DIRECTORIES) {
            owner.claimPath(dir, PathResolver.normalize(resolver.relativize(resolver.ensureDirectory(d)))); // no link
        }
        return resolver;
    }

    private static void restrict(Path dir) {
        try {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException | UnsupportedOperationException ignored) {
            // Not a POSIX file system: nothing to tighten.
        }
    }
}
