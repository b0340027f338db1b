package dev.codeexec.workspace;

import dev.codeexec.engine.Workspace;
import java.nio.file.Path;

/**
 * A workspace file system that can take in a file the engine itself wrote on this host, such as the whole output of
 * a run saved under {@code runs/<run>/}. Unlike {@link dev.codeexec.engine.WorkspaceFS#stageDirectory}, the source
 * need not lie under an input root: only engine code calls it, never with a path a model or an application named.
 * The destination follows every rule of the workspace's paths. Implemented by {@link StandardWorkspaceFS} and
 * {@link HostWorkspaceFS}; a wrapping file system implements it by delegating.
 */
public interface EngineFileImport {

    /**
     * Copies a regular file of this host into the workspace at {@code to}, replacing what is there (a link at
     * {@code to} is replaced, not followed) and creating missing parents.
     *
     * @param hostFile a regular file the engine created
     * @param to       the workspace-relative destination
     * @throws dev.codeexec.engine.CodeExecException when the copy failed (nothing is left at {@code to})
     */
    void importEngineFile(Workspace ws, Path hostFile, String to);
}
