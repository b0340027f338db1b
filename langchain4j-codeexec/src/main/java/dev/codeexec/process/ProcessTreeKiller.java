package dev.codeexec.process;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The one process-tree killer.
 *
 * <p>Programs are launched inside a PID namespace (the local engine wraps them in
 * {@code unshare --pid --fork --kill-child}; bubblewrap is given {@code --unshare-pid --die-with-parent}). The
 * launched process is the wrapper, its one child is the namespace's init, and every process the program starts,
 * including double-forked daemons and {@code setsid} children, stays inside the namespace. Killing the init kills
 * the namespace; the kernel does it at once and no process can escape by re-parenting. A snapshot of
 * {@link ProcessHandle#descendants()} alone would miss re-parented orphans; here it is only a fallback for hosts
 * without namespaces.
 */
public final class ProcessTreeKiller {

    private ProcessTreeKiller() {
    }

    /**
     * Kills the tree with SIGKILL: the namespace init first, then any visible descendant, then the process. Signals
     * go through {@link ProcessHandle}: {@link Process#destroyForcibly()} would also close this JVM's ends of the
     * pipes and lose output the program wrote just before.
     */
    public static void kill(Process process) {
        ProcessHandle h = process.toHandle();
        List<ProcessHandle> tree = h.descendants().toList();
        h.children().forEach(ProcessHandle::destroyForcibly);
        tree.forEach(ProcessHandle::destroyForcibly);
        h.destroyForcibly();
    }

    /**
     * Sends SIGTERM to every process of the tree, waits up to {@code grace} for the launched process to exit, then
     * {@link #kill kills} what is left. A namespace init ignores SIGTERM from outside unless it handles it, so the
     * final kill is what guarantees the end.
     */
    public static void terminate(Process process, Duration grace) {
        ProcessHandle h = process.toHandle();
        h.descendants().forEach(ProcessHandle::destroy);
        // Not Process.destroy(): it closes the pipes, and what the program prints while it shuts down would be lost.
        h.destroy();
        try {
            process.waitFor(Math.max(0, grace.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill(process);
    }
}
