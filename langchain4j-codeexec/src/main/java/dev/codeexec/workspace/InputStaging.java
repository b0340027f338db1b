package dev.codeexec.workspace;

import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The input rules of {@link StandardWorkspaceFS}: the three sources ({@code artifact://}, {@code workspace://}, host
 * paths under an input root), default destinations under {@code work/inputs/}, access checks, and "check every input
 * before staging any".
 */
final class InputStaging {

    private static final String WORKSPACE_SCHEME = "workspace://";
    private static final String HOST_SCHEME = "host://";

    private final StandardWorkspaceFS fs;
    private final List<Path> inputRoots;

    /** @param inputRoots real paths of the host directories inputs may come from */
    InputStaging(StandardWorkspaceFS fs, List<Path> inputRoots) {
        this.fs = fs;
        this.inputRoots = inputRoots;
    }

    List<StagedInput> stage(WorkspaceFiles files, PathAccess access, List<InputSpec> inputs) {
        List<Runnable> actions = new ArrayList<>();
        List<StagedInput> staged = new ArrayList<>();
        // Resolve and check every input first: a bad one stages nothing.
        for (InputSpec in : inputs) {
            String from = in.from().strip();
            if (ArtifactRef.isArtifactRef(from)) {
                Artifact art;
                ArtifactRef ref;
                try {
                    ref = ArtifactRef.parse(from);
                    art = fs.requireArtifacts().load(ref);
                } catch (IllegalArgumentException e) {
                    throw new InvalidSpecException("input '" + from + "' is not a valid artifact reference: "
                            + e.getMessage());
                }
                String dest = destination(in, lastSegment(ref.name()));
                StandardWorkspaceFS.requireWrite(access, dest);
                files.resolve(dest);
                actions.add(() -> files.write(dest, art.content(), PutFile.DEFAULT_MODE));
                staged.add(new StagedInput(from, dest, art.ref().version(), art.size()));
            } else if (from.startsWith(WORKSPACE_SCHEME)) {
                String src = PathResolver.normalize(from.substring(WORKSPACE_SCHEME.length()));
                StandardWorkspaceFS.requireRead(access, src);
                String source = files.resolve(src);
                if (files.stat(source).isEmpty()) {
                    throw new InvalidSpecException("'" + src + "' does not exist in the workspace");
                }
                requireAllReadable(files, access, src, source);
                String dest = destination(in, lastSegment(src));
                StandardWorkspaceFS.requireWrite(access, dest);
                // Both what the destination names and the entry itself (a link there is replaced, not followed).
                requireOutside(source, files.resolve(dest), dest);
                requireOutside(source, entryPath(files, dest), dest);
                ImportSource tree = ImportSource.ofWorkspace(files, source);
                actions.add(() -> StandardWorkspaceFS.importInto(files, tree, dest, false));
                staged.add(new StagedInput(from, dest, null, tree.sizeBytes()));
            } else if (from.startsWith(HOST_SCHEME) || from.startsWith("/")) {
                String hostPath = from.startsWith(HOST_SCHEME) ? from.substring(HOST_SCHEME.length()) : from;
                if (!hostPath.startsWith("/") || hostPath.indexOf('\0') >= 0) {
                    // A relative path would be resolved against the JVM's working directory.
                    throw new InvalidSpecException("input '" + from + "' must name an absolute host path, "
                            + "such as host:///data/file.csv");
                }
                Path source = requireUnderInputRoot(Path.of(hostPath));
                String dest = destination(in, source.getFileName().toString());
                StandardWorkspaceFS.requireWrite(access, dest);
                files.resolve(dest);
                ImportSource tree = ImportSource.ofHostPath(source);
                actions.add(() -> StandardWorkspaceFS.importInto(files, tree, dest, false));
                staged.add(new StagedInput(from, dest, null, tree.sizeBytes()));
            } else {
                throw new InvalidSpecException("input '" + from + "' has an unknown source; use artifact://name[@v], "
                        + "workspace://path, or host:///absolute/path under a configured input root");
            }
        }
        actions.forEach(Runnable::run);
        return staged;
    }

    /**
     * The real path of a host source when it lies under an input root, checked with links resolved. The message does
     * not say which of "not allowed" and "missing" it is, nor echo the path.
     */
    Path requireUnderInputRoot(Path hostSource) {
        Path real;
        try {
            real = hostSource.toRealPath();
        } catch (IOException e) {
            throw new PolicyViolationException("host path is not under an input root configured for this engine, "
                    + "or does not exist");
        }
        for (Path root : inputRoots) {
            if (real.startsWith(root)) {
                return real;
            }
        }
        throw new PolicyViolationException("host path is not under an input root configured for this engine, "
                + "or does not exist");
    }

    private static String destination(InputSpec in, String defaultName) {
        return PathResolver.normalize(in.to() == null || in.to().isBlank()
                ? WorkspaceLayout.INPUTS + "/" + defaultName : in.to());
    }

    static String lastSegment(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? path : path.substring(slash + 1);
    }

    /** The entry a destination names, its parents resolved and its last component not followed. */
    private static String entryPath(WorkspaceFiles files, String dest) {
        int slash = dest.lastIndexOf('/');
        if (slash < 0) {
            return dest;
        }
        String parent = files.resolve(dest.substring(0, slash));
        String name = dest.substring(slash + 1);
        return parent.equals(".") ? name : parent + "/" + name;
    }

    /** A tree copied into itself would grow until a path got too long. */
    private static void requireOutside(String source, String target, String dest) {
        if (source.equals(".") || target.equals(source) || target.startsWith(source + "/")) {
            throw new InvalidSpecException("cannot stage into '" + dest + "': it lies inside the source being copied");
        }
    }

    /**
     * A copy must not carry hidden paths into view: with finer access rules (a sandbox's no-access paths), every
     * entry under the source must be readable, else nothing is copied. The refusal names the source only, not what
     * is hidden in it.
     */
    private static void requireAllReadable(WorkspaceFiles files, PathAccess access, String src, String source) {
        if (access == PathAccess.ALLOW_ALL) {
            return;
        }
        boolean[] hidden = {false};
        files.walk(source, e -> {
            if (!access.canRead(e.path())) {
                hidden[0] = true;
                return WorkspaceFiles.WalkAction.STOP;
            }
            return WorkspaceFiles.WalkAction.CONTINUE;
        });
        if (hidden[0]) {
            throw new PolicyViolationException("'" + src + "' contains paths that the access rules hide, so it is not "
                    + "copied; copy the readable files one by one");
        }
    }
}
