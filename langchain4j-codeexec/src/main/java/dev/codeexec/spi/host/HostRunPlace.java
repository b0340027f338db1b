package dev.codeexec.spi.host;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiConsumer;

/**
 * Where a run of a host-directory backend happens: its checked working directory and its new {@code RUN_DIR}.
 * Host-family SPI (see the package).
 *
 * @param root   the workspace root
 * @param cwd    the working directory, resolved by the workspace's path resolver and known to be a directory
 * @param cwdRel the working directory as the spec gave it, normalized (for messages)
 * @param runDir     the run's directory, workspace-relative, created
 * @param runDirPath the run's directory on the host, as it was created (not resolved again by name)
 */
public record HostRunPlace(Path root, Path cwd, String cwdRel, String runDir, Path runDirPath) {

    /**
     * Resolves the spec's working directory and creates the run's directory.
     *
     * @throws InvalidSpecException             when the working directory is not a directory
     * @throws dev.codeexec.engine.PathEscapeException when it leaves the workspace
     */
    public static HostRunPlace of(PathResolver resolver, RunProgramSpec spec) {
        return of(resolver, spec, (rel, cwd) -> { });
    }

    /**
     * Resolves the spec's working directory, lets {@code cwdCheck} refuse it (with the normalized relative path and
     * the resolved directory), and only then creates the run's directory, so a refusal leaves nothing behind.
     */
    public static HostRunPlace of(PathResolver resolver, RunProgramSpec spec, BiConsumer<String, Path> cwdCheck) {
        String cwdRel = PathResolver.normalize(spec.cwd());
        Path cwd = resolver.resolveExisting(cwdRel);
        if (!Files.isDirectory(cwd)) {
            throw new InvalidSpecException("cwd '" + cwdRel + "' is not a directory");
        }
        cwdCheck.accept(cwdRel, cwd);
        String runDir = WorkspaceLayout.newRunDir();
        Path runDirPath = resolver.ensureDirectory(runDir);
        return new HostRunPlace(resolver.root(), cwd, cwdRel, runDir, runDirPath);
    }

    /** True when {@code path} is a regular, executable file on the host (one stat, no exception when missing). */
    public static boolean isExecutableFile(String path) {
        java.io.File f = new java.io.File(path);
        return f.isFile() && f.canExecute();
    }
}
