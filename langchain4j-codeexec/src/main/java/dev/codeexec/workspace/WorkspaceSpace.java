package dev.codeexec.workspace;

import dev.codeexec.engine.WorkspaceFullException;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The room on the file system that holds a workspace, and the one rule for a write that finds none: it becomes a
 * {@link WorkspaceFullException} that says how much is used of how much, never a bare I/O failure.
 *
 * <p>"Usable" is what an unprivileged program may still write ({@code f_bavail}): on a workspace volume with blocks
 * reserved for the engine (the sandbox's quota), the engine's own bookkeeping can still write when programs cannot,
 * and a write the engine makes on the model's behalf ({@link #requireRoom}) must not dig into that reserve.
 */
public final class WorkspaceSpace {

    private WorkspaceSpace() {
    }

    /** Whether an I/O failure means that the file system or the quota is full. */
    public static boolean isOutOfSpace(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.contains("No space left on device") || m.contains("Disk quota exceeded"))) {
                return true;
            }
        }
        return false;
    }

    /** The exception for a full workspace at {@code root}, with its use as far as it can be read. */
    public static WorkspaceFullException full(Path root, Throwable cause) {
        long used = -1;
        long limit = -1;
        try {
            FileStore store = Files.getFileStore(root);
            used = store.getTotalSpace() - store.getUnallocatedSpace();
            limit = used + store.getUsableSpace();
        } catch (IOException | RuntimeException e) {
            // The use is left out of the message; the exception stands.
        }
        return new WorkspaceFullException(used, limit, cause);
    }

    /**
     * Refuses a write of {@code bytes} on the model's behalf that would not fit in what programs may use.
     *
     * @throws WorkspaceFullException when it would not fit
     */
    public static void requireRoom(Path root, long bytes) {
        long usable;
        try {
            usable = Files.getFileStore(root).getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return; // Unknown: the write itself fails if there is no room, and is translated then.
        }
        if (usable < bytes) {
            throw full(root, null);
        }
    }
}
