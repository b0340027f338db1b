package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.spi.ChunkedStdin;
import dev.codeexec.spi.IoThreads;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.spi.RemoteProcessChannel;
import dev.codeexec.spi.RunListing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process channel of one run in a workspace pod: one exec of the run wrapper ({@link PodScripts#RUN}).
 *
 * <ul>
 *   <li>Start: {@link PodExec#open} with the launch's argv ({@link PodScripts#runArgv}), whose stdin mode argument is
 *       set for the protocol the socket speaks ({@code raw} under v5, {@code framed} under v4); then the wrapper
 *       script itself as the first frame of stdin ({@link PodScripts#runPreamble()}).</li>
 *   <li>Output: frames of channels 1 and 2, pushed into the core's sink by the websocket's thread (through the
 *       listing filter when the wrapper lists folders).</li>
 *   <li>Exit: the status on channel 3. One of 128 or more, not killed (a signal ended the program, or the program
 *       killed its wrapper, whose own end then never ran), is reported once a second exec of
 *       {@link PodScripts#KILL_TREE} swept the orphans the run may have left under PID 1, on {@link #WAITER}.
 *       A socket that closes without one, not killed, lost the run: {@link #failure()}
 *       reports it (the engine's outcome-unknown result), and the run's tree is killed by a second exec on
 *       {@link #WAITER}, never on the websocket's thread.</li>
 *   <li>Stdin: {@link ChunkedStdin} as channel-0 frames; its end is {@code [255, 0]} under v5, the framed end
 *       {@code 0\n} under v4.</li>
 *   <li>Tree kill: a second exec of {@link PodScripts#KILL_TREE} (the wrapper is a subreaper when the pod has a
 *       launcher), with the {@code killed} mark only while the exit is not known; signal: a second exec of {@link PodScripts#SIGNAL}; closing the stream closes the socket.</li>
 * </ul>
 *
 * <p>Thread roles and locks are {@link RemoteProcessChannel}'s: the websocket's thread only decodes, pushes into the
 * sink and completes futures; kill and signal execs run on the thread that asks for them, the sweep after an exit and
 * the kill after a lost stream on {@link #WAITER}; no lock is taken here.
 */
final class PodExecChannel extends RemoteProcessChannel {

    private static final Logger LOG = LoggerFactory.getLogger(PodExecChannel.class);

    /**
     * How long a kill or signal exec may take: a few seconds, so that a timed-out run returns promptly even when the
     * API server is slow (the kill script goes on in the pod when the engine stops waiting for it).
     */
    static final Duration HELPER_TIMEOUT = Duration.ofSeconds(5);

    /** Kills the trees of runs whose stream was lost, off the websocket's thread. */
    static final ExecutorService WAITER = Executors.newCachedThreadPool(
            IoThreads.daemonThreads("codeexec-kubernetes-exit-"));

    private final PodExec exec;
    private final String pod;
    private final String controlDir;
    private final RunListing listing;

    /**
     * @param exec       the execs of the engine's API server and namespace
     * @param pod        the workspace's pod
     * @param controlDir the run's control directory (the wrapper's first argument)
     * @param listing    the wrapper's listing of folders after the program, or null
     */
    PodExecChannel(PodExec exec, String pod, String controlDir, RunListing listing) {
        this.exec = exec;
        this.pod = pod;
        this.controlDir = controlDir;
        this.listing = listing;
    }

    /**
     * The launch's argv with the wrapper's stdin mode set for {@code p}: the argument four places after
     * {@link PodScripts#BOOT} ({@code BOOT sh <control> <run dir> <mode>}).
     */
    static List<String> argvFor(ExecSocket.Protocol p, List<String> argv) {
        int run = argv.indexOf(PodScripts.BOOT);
        if (run < 0 || argv.size() <= run + 4) {
            throw new IllegalArgumentException("not a run wrapper's argv (PodScripts.runArgv)");
        }
        List<String> a = new ArrayList<>(argv);
        a.set(run + 4, p.supportsStdinClose() ? PodScripts.STDIN_RAW : PodScripts.STDIN_FRAMED);
        return a;
    }

    @Override
    protected RemoteProcess open(ProgramLaunch launch, OutputSink output) {
        argvFor(ExecSocket.Protocol.V5, launch.argv()); // checks the argv before anything is opened
        OutputSink sink = listing == null ? output : listing.filter(output);
        PodStdin stdin = new PodStdin();
        ExecSocket s = exec.open(pod, p -> argvFor(p, launch.argv()), true, sink::write, false);
        try {
            byte[] preamble = PodScripts.runPreamble();
            s.send(preamble, 0, preamble.length);
        } catch (IOException e) {
            s.close();
            throw new BackendUnavailableException("the exec stream of pod " + pod + " closed at the start", e);
        }
        PodProcess p = new PodProcess(s, stdin, output);
        stdin.socket = s;
        s.exit().whenComplete((code, t) -> p.onExit(code, t));
        s.closed().whenComplete((v, t) -> p.onClosed());
        return p;
    }

    /** Stdin as channel-0 frames; raw under v5 (ended by the close message), framed under v4. */
    private static final class PodStdin extends ChunkedStdin {
        volatile ExecSocket socket;

        PodStdin() {
            super(ExecSocket.MAX_FRAME);
        }

        @Override
        protected void send(byte[] b, int off, int len) throws IOException {
            ExecSocket s = socket;
            if (s.protocol().supportsStdinClose()) {
                s.send(b, off, len);
            } else {
                byte[] f = PodExec.frame(b, off, len);
                s.send(f, 0, f.length);
            }
        }

        @Override
        protected void sendEnd() {
            ExecSocket s = socket;
            try {
                if (s.protocol().supportsStdinClose()) {
                    s.closeStdin();
                } else {
                    byte[] end = "0\n".getBytes(StandardCharsets.US_ASCII);
                    s.send(end, 0, end.length);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("could not end the stdin of a run (it may have ended): {}", e.toString());
            }
        }
    }

    private final class PodProcess extends RemoteProcess {
        final ExecSocket socket;
        final OutputSink output;
        /** Set when the exit status arrived: a kill after it leaves no mark (the wrapper ran and ended). */
        volatile boolean ended;

        PodProcess(ExecSocket socket, PodStdin stdin, OutputSink output) {
            super(stdin);
            this.socket = socket;
            this.output = output;
        }

        /**
         * On the websocket's thread (or the opener's, when already done): records the exit or the loss. An exit of
         * 128 or more, not killed, is recorded after the orphan sweep ({@link PodScripts#KILL_TREE} without a mark),
         * on {@link #WAITER}.
         */
        void onExit(Integer code, Throwable t) {
            ended = t == null;
            if (t == null && code >= 128 && !killed()) {
                // A signal ended the program, or the wrapper itself (killed from inside: its end never ran, and
                // what the run started is now under PID 1). The run ends once the orphans are swept.
                WAITER.execute(() -> {
                    try {
                        exec.run(pod, PodScripts.killArgv(controlDir, false), null, null, HELPER_TIMEOUT);
                    } catch (RuntimeException e) {
                        LOG.debug("could not sweep the orphans of a run that ended with {}: {}", code,
                                e.getMessage());
                    } finally {
                        exited(code);
                    }
                });
                return;
            }
            if (t == null) {
                exited(code);
                return;
            }
            if (!killed()) {
                lose(t instanceof ExecSocket.ExecStatusException e
                        ? new BackendUnavailableException("the run wrapper did not run in pod " + pod + ": "
                                + e.getMessage(), e)
                        : new BackendUnavailableException("the exec stream of pod " + pod + " ended without an exit"
                                + " status", t.getCause()));
                // Nothing may keep running unseen: the run is over for its caller.
                WAITER.execute(() -> {
                    try {
                        kill(true); // the exit is not known: the wrapper may start after this
                    } catch (RuntimeException e) {
                        LOG.debug("could not kill the tree of a run that lost its stream: {}", e.getMessage());
                    }
                });
            }
            exited(-1);
        }

        void onClosed() {
            if (listing != null) {
                listing.streamEnded(output); // what is not the wrapper's listing is the program's output
            }
            outputEnded();
        }

        @Override
        protected void sendSignal(ProgramSignal signal) {
            String sig = signal == ProgramSignal.INTERRUPT ? "INT" : "TERM";
            exec.run(pod, PodScripts.signalArgv(controlDir, sig), null, null, HELPER_TIMEOUT);
        }

        @Override
        protected void killRemoteTree() {
            kill(!ended && !exit().isDone()); // a kill after the exit only sweeps, and leaves no mark behind
        }

        private void kill(boolean mark) {
            exec.run(pod, PodScripts.killArgv(controlDir, mark), null, null, HELPER_TIMEOUT);
        }

        @Override
        protected void closeStream() {
            socket.close();
        }
    }
}
