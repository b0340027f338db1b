package dev.codeexec.spi.host;

import dev.codeexec.spi.ProgramSignal;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The one process-tree killer of host processes. Package-private: the host channel is its one caller, and a
 * backend kills through {@link HostProcessChannel}.
 *
 * <p>Programs are launched inside a PID namespace (the local engine wraps them in
 * {@code unshare --pid --fork --kill-child}; bubblewrap is given {@code --unshare-pid --die-with-parent}). The
 * launched process is the wrapper, its one child is the namespace's init, and every process the program starts,
 * including double-forked daemons and {@code setsid} children, stays inside the namespace. Killing the init kills
 * the namespace; the kernel does it at once and no process can escape by re-parenting. A snapshot of
 * {@link ProcessHandle#descendants()} alone would miss re-parented orphans; here it is only a fallback for hosts
 * without namespaces.
 */
final class ProcessTreeKiller {

    private ProcessTreeKiller() {
    }

    /**
     * Kills the tree with SIGKILL: the launched process first (a wrapper takes its namespace with it:
     * {@code --kill-child}, {@code --die-with-parent}), then its namespace init and every descendant seen before.
     * The launcher goes first so that it cannot report its child's death as its own error (util-linux
     * {@code unshare} does). Signals go through {@link ProcessHandle}: {@link Process#destroyForcibly()} would also
     * close this JVM's ends of the pipes and lose output the program wrote just before.
     */
    static void kill(Process process) {
        ProcessHandle h = process.toHandle();
        List<ProcessHandle> tree = h.descendants().toList();
        h.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
    }

    /**
     * Sends a signal to the tree without killing it. With {@code spareLauncher} (the launch is wrapped) only the
     * descendants get it: the wrapper would take the namespace down at once. A program that is itself its
     * namespace's init (the local backend) receives a signal from outside only if it handles it; a graceful stop
     * then ends with the kill after the grace.
     */
    static void signal(Process process, ProgramSignal signal, boolean spareLauncher) {
        ProcessHandle h = process.toHandle();
        List<ProcessHandle> targets = new ArrayList<>(h.descendants().toList());
        if (!spareLauncher) {
            targets.add(0, h);
        }
        if (signal == ProgramSignal.TERMINATE) {
            // Not Process.destroy(): it closes the pipes, and output printed while shutting down would be lost.
            targets.forEach(ProcessHandle::destroy);
            return;
        }
        // ProcessHandle sends only SIGTERM and SIGKILL: other signals go through kill(1).
        List<String> argv = new ArrayList<>(List.of("/bin/kill", "-INT"));
        targets.forEach(t -> argv.add(Long.toString(t.pid())));
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            pb.environment().clear(); // an absolute path: kill(1) needs nothing of the JVM's environment
            pb.start().waitFor();
        } catch (IOException e) {
            // No kill(1): the signal is not sent; the caller's kill after the grace still ends the tree.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
