package dev.codeexec.jupyter;

import dev.codeexec.engine.BackendUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The process side of one {@link Kernel}: how it is started, where its client connects, how it is interrupted and
 * killed, and its log. Two transports implement it: {@link HostKernelProcess} (the Jupyter engine's kernels, host
 * processes on loopback TCP ports) and {@link KernelRelay} (a kernel inside another engine's boundary, reached through
 * a relay program's stdin and stdout). Everything else of a kernel (client, handshake, cells, death, stop) is shared.
 *
 * <p>Thread-safe: {@link #launch} and {@link #startFailure} are called by the thread that starts the kernel, the
 * others from any thread.
 */
interface KernelProcess {

    /** The ports and key the kernel's client connects to. */
    ConnectionInfo connection();

    /**
     * Starts the process. {@code onEnd} is called once, from any thread, with a description of its end (for example
     * {@code "the kernel process exited with status 1"}) when the kernel is gone.
     *
     * @throws BackendUnavailableException when it cannot be started at all
     */
    void launch(Consumer<String> onEnd);

    /** The kernel answered its handshake: what only the start needed can go (a host kernel's connection file). */
    void ready();

    /**
     * Why the kernel ended before it answered, once it did: waits (bounded) for the rest of its log first. A
     * {@link Kernel.PortsTaken} asks for another start.
     *
     * @param reason how the kernel ended, as the client knows it
     */
    BackendUnavailableException startFailure(String reason);

    /** The last part of the kernel's own output (its stdout and stderr), for an operator. */
    String logTail();

    /** SIGINT to the kernel (not to a launcher or relay around it). Does nothing once it ended. */
    void signalInterrupt();

    /** Kills the kernel and everything it started; does not block. Idempotent. */
    void killTree();

    /** Completes with the process's exit status when it ended. */
    CompletableFuture<Integer> exit();

    /** The exit status once the process ended, else null. */
    default Integer exitStatus() {
        return exit().getNow(null);
    }

    /**
     * Whether the kernel's side sees {@code out/} as a real, empty directory now, asked after the cell's reply: true
     * only on that answer within {@code timeoutNanos}; false when it is not empty, not known, or this transport cannot
     * ask (the default).
     */
    default boolean outputsSeenEmpty(long timeoutNanos) {
        return false;
    }

    /** Releases what the process holds (killing it if it is still there). Idempotent. */
    void release();
}
