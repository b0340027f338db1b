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
     * Kills the tree with SIGKILL: the launched process first (a wrapper takes its namespace with it:
     * {@code --kill-child}, {@code --die-with-parent}), then its namespace init and every descendant seen before.
     * The launcher goes first so that it cannot report its child's death as its own error (util-linux
     * {@code unshare} does). Signals go through {@link ProcessHandle}: {@link Process#destroyForcibly()} would also
     * close this JVM's ends of the pipes and lose output the program wrote just before.
     */
    public static void kill(Process process) {
        ProcessHandle h = process.toHandle();
        List<ProcessHandle> tree = h.descendants().toList();
        h.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
    }

    /**
     * Sends SIGTERM to the tree, waits up to {@code grace} for the launched process to exit, then {@link #kill kills}
     * what is left. With {@code spareLauncher} (the launch was {@link HostLaunch#wrapped() wrapped}) only the
     * descendants get SIGTERM: the wrapper would take the namespace down at once. A program that is itself its
     * namespace's init (the local backend) receives SIGTERM from outside only if it handles it; otherwise the final
     * kill after the grace ends it.
     */
    public static void terminate(Process process, Duration grace, boolean spareLauncher) {
        ProcessHandle h = process.toHandle();
        h.descendants().forEach(ProcessHandle::destroy);
        if (!spareLauncher) {
            // Not Process.destroy(): it closes the pipes, and output printed while shutting down would be lost.
            h.destroy();
        }
        try {
            process.waitFor(Math.max(0, grace.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill(process);
    }
}
