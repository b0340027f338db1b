package dev.codeexec.spi;

import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The base of a {@link ProcessChannel} whose programs run on the far side of a stream: a Docker exec, an E2B envd
 * process stream, a Kubernetes exec over its websocket protocol. A subclass supplies only its transport; this class
 * does what every such channel must get right the same way: the two futures of a {@link ChannelProcess}, a signal
 * that does nothing once the program ended, an idempotent tree kill that closes a stream the far side does not end,
 * and the first failure after the start, which the engine turns into an outcome-unknown result.
 *
 * <h2>What a subclass supplies</h2>
 * <ul>
 *   <li>{@link #open}: start the program (throw {@link dev.codeexec.engine.BackendUnavailableException} or the
 *       backend's own typed exception when nothing ran) and return a {@link RemoteProcess} whose transport pushes the
 *       program's output into the sink.</li>
 *   <li>A {@link RemoteProcess} subclass with the four transport steps: {@link RemoteProcess#sendSignal},
 *       {@link RemoteProcess#killRemoteTree}, {@link RemoteProcess#closeStream}, and the stdin given to its
 *       constructor ({@link ChunkedStdin} for a transport that sends input as messages, {@link ChunkedStdin#none()}
 *       for a run without input). Its transport calls {@link RemoteProcess#exited} with the exit status and
 *       {@link RemoteProcess#outputEnded} when no more output comes, in whichever order the protocol learns them,
 *       and {@link RemoteProcess#lose} when the stream fails after the start and before the status is known.</li>
 * </ul>
 * A Kubernetes exec, for one, maps to: {@code open} = the websocket upgrade of {@code pods/exec}; output = frames of
 * channels 1 and 2 pushed by the websocket reader; exit = the status message on channel 3; stdin = frames of channel
 * 0, its end the close message of protocol v5; {@code killRemoteTree} = a second exec that kills the run's process
 * group; {@code closeStream} = closing the websocket.
 *
 * <h2>Thread roles</h2>
 * <ul>
 *   <li><b>The transport's reader</b> (a callback thread of the client library, or a reader thread of the channel's
 *       own, named after the backend) only decodes and pushes into the {@link OutputSink}, and completes the
 *       futures. It never runs caller code and never waits for the far side on a request of its own: a status that
 *       must be fetched after the stream ended is fetched on another thread of the channel.</li>
 *   <li><b>The core's I/O thread</b> writes stdin, one write at a time ({@link ProgramRuns}, {@link ChannelSession}).
 *   </li>
 *   <li><b>Any thread</b> (the caller, the core's timer on a timeout, a workspace being removed) may call
 *       {@link ChannelProcess#signal} or {@link ChannelProcess#killTree}; the transport's kill and signal requests
 *       run on that thread. A kill waits at most {@link #KILL_WAIT} for the output to end, then closes the stream,
 *       so it returns promptly even when the far side no longer answers.</li>
 * </ul>
 *
 * <h2>Lock rules</h2>
 * There are none here: the state is two {@link CompletableFuture}s, an {@link AtomicBoolean} (killed) and an
 * {@link AtomicReference} (the first failure, first one wins); the last process is a volatile reference. No thread
 * holds a lock while it waits for the far side. A subclass that needs one keeps it off every call to the far side.
 */
public abstract class RemoteProcessChannel implements ProcessChannel {

    /** How long {@link ChannelProcess#killTree()} waits for the output to end before it closes the stream: 10 s. */
    public static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private volatile RemoteProcess last;

    @Override
    public final ChannelProcess start(ProgramLaunch launch, OutputSink output) {
        RemoteProcess p = open(launch, output);
        last = p;
        return p;
    }

    /**
     * Starts the program on the far side and returns it once it runs; its output flows into {@code output} from the
     * transport's thread.
     *
     * @throws RuntimeException a typed exception (for one, {@link dev.codeexec.engine.BackendUnavailableException})
     *                          when nothing ran; the message names no host path
     */
    protected abstract RemoteProcess open(ProgramLaunch launch, OutputSink output);

    /**
     * What made the last program's stream fail after it started (its outcome is unknown), or null when it ended,
     * was killed or timed out. Read it in {@link PreparedRun#check}, after the run.
     */
    public final RuntimeException failure() {
        RemoteProcess p = last;
        return p == null ? null : p.failure.get();
    }

    /** Kills the last program this channel started, if it still runs (a workspace being removed). */
    public final void killRunning() {
        RemoteProcess p = last;
        if (p != null) {
            p.killTree();
        }
    }

    /**
     * A program started on the far side. The futures, the guard of {@link #signal}, the idempotent
     * {@link #killTree} and the first failure live here; the transport supplies the rest.
     */
    public abstract static class RemoteProcess implements ChannelProcess {

        private final Logger log = LoggerFactory.getLogger(getClass());
        private final OutputStream stdin;
        private final CompletableFuture<Integer> exit = new CompletableFuture<>();
        private final CompletableFuture<Void> outputEnd = new CompletableFuture<>();
        private final AtomicBoolean killed = new AtomicBoolean();
        private final AtomicReference<RuntimeException> failure = new AtomicReference<>();

        /** @param stdin the program's standard input ({@link ChunkedStdin}, or {@link ChunkedStdin#none()}) */
        protected RemoteProcess(OutputStream stdin) {
            this.stdin = stdin;
        }

        /** Sends {@code signal} to the program (not to a launcher around it). May throw; a failure is logged. */
        protected abstract void sendSignal(ProgramSignal signal);

        /**
         * Kills the program and every process it started on the far side. Called at most once, from
         * {@link #killTree()}, unless the subclass calls it itself (on a failure). May throw; a failure is logged.
         */
        protected abstract void killRemoteTree();

        /**
         * Closes the stream when the output did not end within {@link #KILL_WAIT} of a kill, and completes
         * {@link #outputEnd()} (directly, or through the reader, which sees its stream closed). Must not block on the
         * far side.
         */
        protected abstract void closeStream();

        /** Records the exit status; the first call wins. */
        protected final void exited(int code) {
            exit.complete(code);
        }

        /** Records that no more output comes; true for the call that recorded it. */
        protected final boolean outputEnded() {
            return outputEnd.complete(null);
        }

        /** Whether {@link #killTree()} was called: a stream that breaks after it is the kill's doing, not a loss. */
        protected final boolean killed() {
            return killed.get();
        }

        /**
         * Records a failure of the stream after the start, before the outcome was known; the first one wins, and
         * {@link RemoteProcessChannel#failure()} reports it. The subclass kills what may still run.
         *
         * @return true when this was the first failure
         */
        protected final boolean lose(RuntimeException why) {
            return failure.compareAndSet(null, why);
        }

        /** The failure recorded by {@link #lose}, or null. */
        protected final RuntimeException lost() {
            return failure.get();
        }

        @Override
        public final OutputStream stdin() {
            return stdin;
        }

        @Override
        public final CompletableFuture<Integer> exit() {
            return exit;
        }

        @Override
        public final CompletableFuture<Void> outputEnd() {
            return outputEnd;
        }

        /** Sends the signal unless the program ended (its status or its output's end is known). */
        @Override
        public final void signal(ProgramSignal signal) {
            if (exit.isDone() || outputEnd.isDone()) {
                return;
            }
            try {
                sendSignal(signal);
            } catch (RuntimeException e) {
                log.debug("could not signal a program", e);
            }
        }

        /**
         * Kills the tree once, then waits up to {@link #KILL_WAIT} for the output to end; a stream that did not end
         * is closed, so that the run is over for the core.
         */
        @Override
        public final void killTree() {
            if (exit.isDone() && outputEnd.isDone()) {
                return;
            }
            if (!killed.compareAndSet(false, true)) {
                return;
            }
            try {
                killRemoteTree();
            } catch (RuntimeException e) {
                log.warn("could not kill a program's processes: {}", e.getMessage());
            }
            try {
                outputEnd.get(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeStream();
            } catch (Exception e) {
                closeStream();
            }
        }
    }
}
