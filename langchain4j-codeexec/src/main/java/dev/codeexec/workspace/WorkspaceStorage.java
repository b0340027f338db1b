package dev.codeexec.workspace;

import java.nio.file.Path;

/**
 * What holds the files of a host-directory workspace ({@link HostWorkspaceManager}): the base directory's own file
 * system ({@link #DIRECTORIES}), or a volume of the workspace's own that bounds its size, which an engine supplies
 * (the sandbox's loop-mounted file systems). Backend SPI.
 */
public interface WorkspaceStorage {

    /** Plain directories on the base directory's file system: nothing bounds a workspace's size. */
    WorkspaceStorage DIRECTORIES = new WorkspaceStorage() {
        @Override
        public boolean enforcesQuota() {
            return false;
        }

        @Override
        public void attach(Path dir, long maxBytes) {
        }

        @Override
        public void detach(Path dir) {
        }
    };

    /** Whether {@link #attach} bounds what programs can write in the workspace. */
    boolean enforcesQuota();

    /**
     * Makes the new, empty directory {@code dir} the root of a workspace's storage. On failure nothing of it is left
     * attached.
     *
     * @param maxBytes the workspace's quota ({@link dev.codeexec.engine.WorkspacePolicy#maxDiskBytes()}); 0 for the
     *                 storage's default
     * @throws dev.codeexec.engine.CodeExecException when the storage cannot be set up
     */
    void attach(Path dir, long maxBytes);

    /**
     * Releases what {@link #attach} set up for {@code dir}, with every file in it; {@code dir} is left, empty, for the
     * caller to remove. Never throws for a directory that was not attached.
     */
    void detach(Path dir);
}
