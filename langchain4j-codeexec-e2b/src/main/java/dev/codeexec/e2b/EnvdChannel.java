package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.ChunkedStdin;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.spi.RemoteProcessChannel;
import dev.codeexec.spi.RunListing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process channel of a sandbox: a program is one {@code process.Process/Start} call, server-streaming Connect
 * with JSON over HTTP/1.1 (one request per run, one connection while it streams). The first message is the start
 * event with envd's pid, then data events (base64 stdout and stderr) are pushed into the core's sink from this
 * channel's reader thread in arrival order, keepalives are skipped, the end event carries the exit status, and the
 * end-of-stream envelope closes the call.
 *
 * <ul>
 *   <li>Stdin: off ({@code "stdin":false}, the program reads /dev/null) for a run without input; otherwise each write
 *       is a {@code SendInput} and close is {@code CloseStdin}.</li>
 *   <li>Tree kill: {@code SendSignal} SIGKILL to envd's pid, which is the run's {@code unshare --kill-child}: its
 *       namespace's PID 1 dies with it and the kernel kills every process of the namespace, daemons that called
 *       {@code setsid} included. Closing the stream alone would leave the program running (envd keeps it).</li>
 *   <li>Signals: SendSignal would reach {@code unshare}, not the program, and knows only TERM and KILL; a helper
 *       sends the signal to the namespace's PID 1, which forwards it to the program.</li>
 *   <li>Failures after the start event and before the end event (the stream broke, a malformed envelope, an error in
 *       the end-of-stream envelope, the sandbox gone) kill the program first, end the run with status -1 and a line on
 *       stderr, and are kept for {@link #failure()}, which the engine turns into
 *       {@link dev.codeexec.engine.RunOutcomeUnknownException} for runs (the program ran, for all anyone knows),
 *       or {@link E2bSandboxGoneException}. Failures before the start event are thrown by {@link #start} (nothing
 *       ran); a stream that breaks after the end event loses nothing.</li>
 * </ul>
 *
 * <p>Thread roles ({@link RemoteProcessChannel} holds the rules): the reader thread ({@code codeexec-e2b-process-N})
 * only decodes and pushes into the sink; stdin requests run on the core's I/O thread, kills on whichever thread calls
 * them.
 */
final class EnvdChannel extends RemoteProcessChannel {

    private static final Logger LOG = LoggerFactory.getLogger(EnvdChannel.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** The stream readers, one per running program; idle ones are kept a minute for the next runs. */
    private static final java.util.concurrent.ExecutorService READERS = java.util.concurrent.Executors
            .newCachedThreadPool(r -> {
                Thread t = new Thread(r, "codeexec-e2b-process-" + THREADS.incrementAndGet());
                t.setDaemon(true);
                return t;
            });

    /** envd's own deadline beyond the run's timeout: a backstop that kills the program if this JVM is gone. */
    static final Duration BACKSTOP = Duration.ofSeconds(60);

    /** The longest deadline sent; longer runs (sessions) rely on this engine and the sandbox's timeout. */
    private static final Duration MAX_DEADLINE = Duration.ofHours(24);

    /** Bytes of stdin per {@code SendInput}. */
    static final int STDIN_CHUNK = 64 << 10;

    private final Sandbox sandbox;
    private final boolean interactive;
    private final String program;
    /** The folders the run's PID 1 lists after the program, taken out of its stdout; null for none. */
    private final RunListing listing;

    /**
     * @param interactive true when stdin stays open for writes (sessions); a run opens it only when it has input
     * @param program     the program's name for messages (the argv starts with the launcher)
     * @param listing     the listing the run writes after the program ({@link SandboxScripts#NS_INIT}), or null
     */
    EnvdChannel(Sandbox sandbox, boolean interactive, String program, RunListing listing) {
        this.sandbox = sandbox;
        this.interactive = interactive;
        this.program = program;
        this.listing = listing;
    }

    @Override
    protected RemoteProcess open(ProgramLaunch launch, OutputSink output) {
        sandbox.requireAlive();
        boolean stdin = interactive || launch.stdin() != null && !launch.stdin().isEmpty();
        ObjectNode req = Sandbox.startRequest(launch.argv(), launch.directory(), stdin);
        Duration deadline = launch.timeout().plus(BACKSTOP);
        if (deadline.compareTo(MAX_DEADLINE) > 0) {
            deadline = MAX_DEADLINE;
        }
        String what = "run " + program;
        EnvdStream stream;
        long pid;
        try {
            stream = sandbox.envd.stream("process.Process/Start", req, Envd.ROOT, deadline, Sandbox.KEEPALIVE, what);
        } catch (RuntimeException e) {
            throw sandbox.failure(e, what);
        }
        try {
            JsonNode first = stream.next();
            JsonNode start = first == null ? null : first.path("event").get("start");
            if (start == null) {
                throw new E2bProtocolException("sandbox " + sandbox.id() + ": the first message of '" + what
                        + "' is not the start event", 200, null);
            }
            pid = start.path("pid").asLong(0);
            if (pid <= 0) {
                throw new E2bProtocolException("sandbox " + sandbox.id() + ": the start event of '" + what
                        + "' names no pid", 200, null);
            }
        } catch (IOException e) {
            stream.close();
            E2bSandboxGoneException g = sandbox.checkGone(what);
            throw g != null ? g : new E2bProtocolException("sandbox " + sandbox.id() + ": the stream of '" + what
                    + "' broke off before the program started (" + e.getClass().getSimpleName() + ")", e);
        } catch (RuntimeException e) {
            stream.close();
            throw sandbox.failure(e, what);
        }
        Remote r = new Remote(stream, pid, output, stdin, what);
        READERS.execute(r::read);
        return r;
    }

    /** A started program. */
    private final class Remote extends RemoteProcess {
        final EnvdStream stream;
        final long pid;
        final OutputSink output;
        /** {@link #output}, without the listing when the run writes one. */
        final OutputSink sink;
        final String what;

        Remote(EnvdStream stream, long pid, OutputSink output, boolean stdin, String what) {
            super(stdin ? new Stdin(pid, what) : ChunkedStdin.none());
            this.stream = stream;
            this.pid = pid;
            this.output = output;
            this.sink = listing == null ? output : listing.filter(output);
            this.what = what;
        }

        /** The reader: decodes messages into the sink until the end of stream or a failure. */
        void read() {
            try {
                JsonNode m;
                while ((m = stream.next()) != null) {
                    JsonNode ev = m.path("event");
                    JsonNode data = ev.get("data");
                    if (data != null) {
                        JsonNode bytes = data.has("stdout") ? data.get("stdout")
                                : data.has("stderr") ? data.get("stderr") : data.get("pty");
                        if (bytes != null) {
                            byte[] b = Sandbox.decode(bytes.asText(), what);
                            if (b.length > 0) {
                                sink.write(Sandbox.streamOf(data), b, 0, b.length);
                            }
                        }
                    } else if (ev.has("end")) {
                        // exitCode is omitted when 0 (proto3 JSON); a program killed by a signal reports -1.
                        exited(ev.get("end").path("exitCode").asInt(0));
                    }
                    // keepalive, and events this version does not know: nothing to do.
                }
                if (!exit().isDone()) {
                    fail(new E2bProtocolException("sandbox " + sandbox.id() + ": the stream of '" + what
                            + "' ended without the program's end event", 200, "truncated"));
                }
            } catch (IOException e) {
                if (exit().isDone()) {
                    // The end event came: the outcome is known, only the stream's tail was lost.
                    LOG.debug("the stream of a program that ended broke afterwards", e);
                } else if (!killed()) {
                    E2bSandboxGoneException g = sandbox.checkGone(what);
                    fail(g != null ? g : new E2bProtocolException("sandbox " + sandbox.id() + ": the output stream of '"
                            + what + "' " + (stream.stalled() ? "stayed silent past its keepalive interval"
                            : "broke off") + " (" + e.getClass().getSimpleName() + ")", e));
                }
            } catch (RuntimeException e) {
                if (!exit().isDone()) {
                    // A stream cut short or garbled may be a sandbox that died under it: that is what to report.
                    E2bSandboxGoneException g = e instanceof E2bProtocolException ? sandbox.checkGone(what)
                            : null;
                    fail(g != null ? g : sandbox.failure(e, what));
                } else {
                    LOG.debug("the stream of a program that ended failed afterwards", e);
                }
            } finally {
                stream.close();
                exited(-1);
                if (listing != null) {
                    listing.streamEnded(output); // what is not the run's listing is the program's output
                }
                outputEnded();
            }
        }

        /** A failure after the start: noted on stderr, kept for the engine, and the program is killed. */
        private void fail(RuntimeException e) {
            lose(e);
            byte[] note = ("\n[codeexec] " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
            sink.write(StdStream.STDERR, note, 0, note.length);
            if (!(e instanceof E2bSandboxGoneException)) {
                sendKill();
            }
        }

        private void sendKill() {
            ObjectNode req = Json.object();
            req.putObject("process").put("pid", pid);
            req.put("signal", "SIGNAL_SIGKILL");
            try {
                sandbox.envd.call("process.Process/SendSignal", req, Envd.ROOT, E2bHttp.Retry.TRANSIENT,
                        "kill " + what);
            } catch (E2bApiException e) {
                if (!"not_found".equals(e.errorCode())) {
                    LOG.warn("could not kill a program in sandbox {}: {}", sandbox.id(), e.getMessage());
                }
            } catch (RuntimeException e) {
                LOG.warn("could not kill a program in sandbox {}: {}", sandbox.id(), e.getMessage());
            }
        }

        @Override
        protected void sendSignal(ProgramSignal signal) {
            String sig = signal == ProgramSignal.INTERRUPT ? "INT" : "TERM";
            sandbox.helper(List.of("/bin/sh", "-c", SandboxScripts.SIGNAL, "sh", Long.toString(pid), sig),
                    "signal " + what);
        }

        @Override
        protected void killRemoteTree() {
            if (!sandbox.isGone()) {
                sendKill();
            }
        }

        @Override
        protected void closeStream() {
            stream.close();
        }
    }

    /** Stdin over {@code SendInput}; close is {@code CloseStdin}. Used by one thread at a time (the core's). */
    private final class Stdin extends ChunkedStdin {
        private final long pid;
        private final String what;

        Stdin(long pid, String what) {
            super(STDIN_CHUNK);
            this.pid = pid;
            this.what = what;
        }

        @Override
        protected void send(byte[] b, int off, int len) throws IOException {
            ObjectNode req = Json.object();
            req.putObject("process").put("pid", pid);
            req.putObject("input").put("stdin", Base64.getEncoder().encodeToString(
                    java.util.Arrays.copyOfRange(b, off, off + len)));
            try {
                sandbox.envd.call("process.Process/SendInput", req, Envd.ROOT, E2bHttp.Retry.NEVER,
                        "write to the stdin of " + what);
            } catch (RuntimeException e) {
                throw new IOException("could not write to the program's stdin: " + e.getMessage(), e);
            }
        }

        @Override
        protected void sendEnd() {
            // Sent even when the end event may have arrived: envd answers not_found then, which is fine.
            ObjectNode req = Json.object();
            req.putObject("process").put("pid", pid);
            try {
                sandbox.envd.call("process.Process/CloseStdin", req, Envd.ROOT, E2bHttp.Retry.TRANSIENT,
                        "close the stdin of " + what);
            } catch (RuntimeException e) {
                LOG.debug("could not close a program's stdin (it may have ended)", e);
            }
        }
    }
}
