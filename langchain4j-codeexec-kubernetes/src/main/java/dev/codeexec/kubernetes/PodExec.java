package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.ContainerShell;
import dev.codeexec.spi.IoThreads;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Execs in the workspace pods of one namespace of one API server: the bounded helper commands of {@link PodCommands}
 * (a tar stream, a kill, a probe) and the sockets of runs ({@link #open}, for {@link PodExecChannel}).
 *
 * <p>Protocol: v5 is offered first; an API server that refuses the upgrade (it answers an unsupported subprotocol
 * with {@code 403}) is asked again with v4, and when v4 then opens, every later exec of this instance goes straight
 * to v4 ({@link #protocol()}). A refusal of v4 too is the user's: RBAC lacks {@code create} on {@code pods/exec}.
 *
 * <p>Thread roles: any thread may call {@link #run} or {@link #open}; each waits on its own thread. A command's stdin
 * is written by a thread of the core's {@link IoThreads#IO} pool (so that a command echoing its input cannot stall),
 * its stdout by the calling thread (the websocket is asked for the next message only once a chunk was written: the
 * websocket's thread never waits on the caller's stream). The remembered protocol is one volatile field; no lock.
 */
final class PodExec implements PodCommands {

    private static final Logger LOG = LoggerFactory.getLogger(PodExec.class);

    /** How long the websocket upgrade of one exec may take. */
    static final Duration OPEN_TIMEOUT = Duration.ofSeconds(30);

    /** Characters of a command's stderr kept for its {@link Result}. */
    static final int STDERR_KEPT = 8192;

    private static final Object EOF = new Object();

    private final HttpClient http;
    private final String master;
    private final String namespace;
    private volatile ExecSocket.Protocol protocol = ExecSocket.Protocol.V5;

    /** Execs through {@code client}'s own HTTP client and master URL, in {@code namespace}. */
    PodExec(KubernetesClient client, String namespace) {
        this(client.getHttpClient(), client.getMasterUrl().toString(), namespace);
    }

    PodExec(HttpClient http, String master, String namespace) {
        this.http = http;
        this.master = master;
        this.namespace = namespace;
    }

    /** The protocol the next exec offers first: v5 until this API server refused it, v4 after. */
    ExecSocket.Protocol protocol() {
        return protocol;
    }

    /** Whether a run's stdin can be ended by the protocol (v5); under v4 a run wrapper takes framed stdin. */
    boolean supportsStdinClose() {
        return protocol.supportsStdinClose();
    }

    /**
     * Opens one exec in {@code pod}, offering v5 first unless this API server refused it before.
     *
     * @param argv       the command for the protocol the socket will speak (a run wrapper's stdin mode differs)
     * @param stdin      whether the command gets a stdin stream
     * @param holdStdout see {@link ExecSocket#open}
     * @throws dev.codeexec.engine.WorkspaceGoneException the pod does not exist
     * @throws BackendUnavailableException                nothing ran (RBAC refusal named, endpoint named)
     */
    ExecSocket open(String pod, Function<ExecSocket.Protocol, List<String>> argv, boolean stdin,
                    ExecSocket.Receiver receiver, boolean holdStdout) {
        ExecSocket.Protocol first = protocol;
        try {
            return ExecSocket.open(http, ExecSocket.uri(master, namespace, pod, argv.apply(first), stdin), first, pod,
                    receiver, holdStdout, OPEN_TIMEOUT);
        } catch (ExecSocket.UpgradeRefused refused) {
            if (first == ExecSocket.Protocol.V5) {
                try {
                    ExecSocket s = ExecSocket.open(http, ExecSocket.uri(master, namespace, pod,
                            argv.apply(ExecSocket.Protocol.V4), stdin), ExecSocket.Protocol.V4, pod, receiver,
                            holdStdout, OPEN_TIMEOUT);
                    if (protocol != ExecSocket.Protocol.V4) {
                        LOG.info("the API server refused exec protocol v5; using v4 (no stdin close: runs take framed"
                                + " stdin)");
                    }
                    protocol = ExecSocket.Protocol.V4;
                    return s;
                } catch (ExecSocket.UpgradeRefused again) {
                    throw forbidden(pod, again);
                }
            }
            throw forbidden(pod, refused);
        }
    }

    private BackendUnavailableException forbidden(String pod, ExecSocket.UpgradeRefused r) {
        if (r.code == 403) {
            return new BackendUnavailableException("forbidden: the API server refused an exec in pod " + pod
                    + " (403); the engine's user needs the 'create' verb on 'pods/exec' (and 'get' on 'pods') in"
                    + " namespace " + namespace, r);
        }
        return new BackendUnavailableException("the API server refused the exec upgrade in pod " + pod + " ("
                + r.code + ")", r);
    }

    @Override
    public Result run(String pod, List<String> argv, InputStream stdin, OutputStream stdout, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        LinkedBlockingQueue<Object> chunks = new LinkedBlockingQueue<>();
        StringBuilder err = new StringBuilder();
        ExecSocket.Receiver receiver = (stream, b, off, len) -> {
            if (stream == StdStream.STDOUT) {
                chunks.add(java.util.Arrays.copyOfRange(b, off, off + len));
            } else {
                synchronized (err) {
                    if (err.length() < STDERR_KEPT) {
                        err.append(new String(b, off, Math.min(len, STDERR_KEPT - err.length()),
                                StandardCharsets.UTF_8));
                    }
                }
            }
        };
        ExecSocket s = open(pod, p -> commandFor(p, argv, stdin != null), stdin != null, receiver, true);
        s.closed().whenComplete((v, t) -> chunks.add(EOF));
        CompletableFuture<Void> input = stdin == null ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(() -> pump(s, stdin), IoThreads.IO);
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                Object c = left <= 0 ? null : chunks.poll(left, TimeUnit.NANOSECONDS);
                if (c == null) {
                    throw new BackendUnavailableException("a command in pod " + pod + " did not end within "
                            + timeout.toMillis() + " ms; its stream was closed");
                }
                if (c == EOF) {
                    break;
                }
                if (stdout != null) {
                    stdout.write((byte[]) c);
                }
                s.request();
            }
            int code = s.exit().get();
            synchronized (err) {
                return new Result(code, err.toString());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted during a command in pod " + pod, e);
        } catch (IOException e) {
            throw new BackendUnavailableException("could not take the output of a command in pod " + pod + ": "
                    + e.getMessage(), e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r
                    : new BackendUnavailableException("a command in pod " + pod + " failed", e.getCause());
        } finally {
            if (!s.closed().isDone()) {
                s.close();
            }
            input.cancel(true);
        }
    }

    /**
     * The argv of a helper command for protocol {@code p}: as given, except that a command with stdin under v4 reads
     * it through the framed decoder ({@link ContainerShell#FRAMED_STDIN_DECODER}), whose {@code 0\n} ends it.
     */
    static List<String> commandFor(ExecSocket.Protocol p, List<String> argv, boolean stdin) {
        if (!stdin || p.supportsStdinClose()) {
            return argv;
        }
        List<String> a = new ArrayList<>(List.of("sh", "-c", ContainerShell.FRAMED_STDIN_DECODER + " | \"$@\"", "sh"));
        a.addAll(argv);
        return a;
    }

    /** Sends {@code in} to its end, then the end of file (the close message, or the framed end under v4). */
    private static void pump(ExecSocket s, InputStream in) {
        try (in) {
            byte[] buf = new byte[ExecSocket.MAX_FRAME];
            for (int n; (n = in.read(buf)) > 0; ) {
                if (s.protocol().supportsStdinClose()) {
                    s.send(buf, 0, n);
                } else {
                    byte[] f = frame(buf, 0, n);
                    s.send(f, 0, f.length);
                }
            }
            if (s.protocol().supportsStdinClose()) {
                s.closeStdin();
            } else {
                byte[] end = "0\n".getBytes(StandardCharsets.US_ASCII);
                s.send(end, 0, end.length);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("stdin of a pod command not delivered in full: {}", e.toString());
        }
    }

    /** One frame of framed stdin: {@code <length>\n} and the bytes. */
    static byte[] frame(byte[] b, int off, int len) {
        ByteArrayOutputStream f = new ByteArrayOutputStream(len + 12);
        f.writeBytes((len + "\n").getBytes(StandardCharsets.US_ASCII));
        f.write(b, off, len);
        return f.toByteArray();
    }

    /**
     * Which {@link PodScripts.Reaper} the workspace pod {@code pod} has ({@link PodScripts#PROBE}): run once per pod
     * by the engine, which refuses a workspace whose pod has {@link PodScripts.Reaper#NONE} (daemons that
     * double-fork can then escape a run's kill) unless its builder accepts that, and reports it per workspace
     * ({@link KubernetesEngine#hardeningOf}).
     */
    PodScripts.Reaper probeReaper(String pod) {
        return prepare(pod, List.of());
    }

    /**
     * Prepares a new workspace pod in one exec: makes {@code dirs} (the workspace layout), then finds which
     * {@link PodScripts.Reaper} the pod has ({@link PodScripts#PROBE}).
     *
     * @throws BackendUnavailableException when the directories cannot be made or the probe fails
     */
    PodScripts.Reaper prepare(String pod, List<String> dirs) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Result r = run(pod, PodScripts.probeArgv(dirs), null, out, OPEN_TIMEOUT);
        if (r.exitCode() == 125) {
            throw new BackendUnavailableException("could not make the workspace layout in pod " + pod + " (is "
                    + PodLayout.VOLUME + " a volume the pod's user may write?): " + r.stderr().strip());
        }
        if (r.exitCode() != 0) {
            throw new BackendUnavailableException("the subreaper probe failed in pod " + pod + " (exit "
                    + r.exitCode() + "): " + r.stderr());
        }
        return PodScripts.reaperOf(out.toString(StandardCharsets.UTF_8));
    }
}
