package dev.codeexec.spi;

import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/**
 * A program started by a {@link ProcessChannel}: its standard input, its end, and the two ways to stop it. What the
 * core builds on it (timeouts, drain rules, output caps, sessions) needs nothing else.
 *
 * <p>Implementations are thread-safe: the core writes stdin from an I/O thread, waits on the futures from the
 * caller's thread and may kill from a timer thread at the same time.
 */
public interface ChannelProcess {

    /**
     * The program's standard input. Writes may block while the program does not read (the core writes from its own
     * thread and bounds how long it waits); {@link OutputStream#close()} is end of file. After the program ended,
     * writes fail with an {@link java.io.IOException}.
     */
    OutputStream stdin();

    /**
     * Completes with the program's exit status when it ended (for a killed program, whatever status the backend
     * reports; the core marks timed-out runs itself). Never completes exceptionally for a program that ran: a backend
     * that loses track of it completes it with a status and reports the loss in the output.
     */
    CompletableFuture<Integer> exit();

    /**
     * Completes when the backend will deliver no more output to the {@link OutputSink}: both streams reached their
     * end. It may complete after {@link #exit()} (a host program's background child may hold the pipes open) or
     * before it (a stream over HTTP ends, then the status is fetched).
     */
    CompletableFuture<Void> outputEnd();

    /**
     * Sends a signal to the program, not to a launcher or wrapper around it (signalling a namespace's launcher
     * would end the namespace at once, without grace). Does nothing once the program ended.
     */
    void signal(ProgramSignal signal);

    /**
     * Kills the program and every process it started, daemons that detached themselves included: a PID namespace
     * on the host, a process group or namespace inside a container, the remote process tree. Idempotent; afterwards
     * {@link #exit()} and {@link #outputEnd()} complete promptly.
     */
    void killTree();
}
