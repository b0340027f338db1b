package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.spi.host.HostProcessChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kernel of the Jupyter engine: a host process started through the core's host process channel as a
 * {@link ProgramRuns} session, whose bounded log keeps the kernel's own stdout and stderr, and which binds the loopback
 * TCP ports of a connection file written with fresh ports and key (deleted once the kernel is ready). Ports taken by
 * someone else in the meantime make the kernel exit at once: {@link #startFailure} then asks for another start.
 *
 * <p>Thread-safe: the channel's process is an atomic reference, the session a volatile.
 */
final class HostKernelProcess implements KernelProcess {

    private static final Logger LOG = LoggerFactory.getLogger(HostKernelProcess.class);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    /**
     * What every host kernel of an engine shares.
     *
     * @param json     the engine's JSON mapper
     * @param stateDir where connection files are written (mode 0700, not in a workspace)
     * @param command  the kernel's argv with {@code {connection_file}}, resolved at the first start
     * @param channel  the host channel kernels are launched on (forking from long-lived threads)
     * @param prefix   launchers put in front of the kernel's argv
     */
    record Host(ObjectMapper json, Path stateDir, Supplier<List<String>> command, HostProcessChannel channel,
                List<String> prefix) {
    }

    private final Host host;
    private final String label;
    private final String cwd;
    private final Map<String, String> env;
    private final ConnectionInfo conn;
    private final Path connectionFile;
    private final AtomicReference<ChannelProcess> process = new AtomicReference<>();
    /** The exit of a process that was never launched: it never completes. */
    private final CompletableFuture<Integer> notLaunched = new CompletableFuture<>();
    private volatile ProgramSession session;

    /**
     * A new connection file with fresh ports and key.
     *
     * @param cwd its working directory on the host
     * @param env its complete environment
     */
    HostKernelProcess(Host host, String label, String cwd, Map<String, String> env) {
        this.host = host;
        this.label = label;
        this.cwd = cwd;
        this.env = env;
        this.conn = ConnectionInfo.allocate();
        this.connectionFile = host.stateDir().resolve("kernel-" + SEQUENCE.incrementAndGet() + ".json");
        conn.write(connectionFile, host.json());
    }

    /** The connection file's path: it names the kernel's processes on the host (their command line holds it). */
    Path connectionFile() {
        return connectionFile;
    }

    @Override
    public ConnectionInfo connection() {
        return conn;
    }

    @Override
    public void launch(Consumer<String> onEnd) {
        List<String> argv = new ArrayList<>(host.prefix());
        for (String a : host.command().get()) {
            argv.add(a.replace(JupyterEngine.CONNECTION_FILE, connectionFile.toString()));
        }
        // The channel's ChannelProcess is kept beside the session: the session offers no interrupt, the kernel needs one.
        ProcessChannel capturing = (launch, sink) -> {
            ChannelProcess p = host.channel().start(launch, sink);
            process.set(p);
            return p;
        };
        session = ProgramRuns.startSession(capturing, new ProgramLaunch(argv, env, cwd, null, Kernel.LIFETIME,
                1 << 16, null), label);
        session.closeStdin(); // a kernel's code reading sys.stdin gets end of file instead of waiting forever
        process.get().exit().whenComplete((status, e) -> onEnd.accept(Kernel.describeExit(status)));
    }

    @Override
    public void ready() {
        deleteConnectionFile();
    }

    @Override
    public BackendUnavailableException startFailure(String reason) {
        // The exit future completes before the session's log has the last output: wait for the output to end.
        ProgramSession sess = session;
        if (sess != null) {
            sess.await(Duration.ofSeconds(2), 0, 1);
        }
        String log = logTail();
        if (log.contains("Address already in use")) {
            return new Kernel.PortsTaken(reason);
        }
        return new BackendUnavailableException("the Jupyter kernel could not start: " + reason + Kernel.lastLine(log)
                + ". Its log is in the application log.");
    }

    @Override
    public String logTail() {
        ProgramSession sess = session;
        if (sess == null) {
            return "";
        }
        ProgramPoll p = sess.poll(0, 1 << 20);
        String out = p.output();
        return out.length() > 4000 ? "..." + out.substring(out.length() - 4000) : out;
    }

    @Override
    public void signalInterrupt() {
        ChannelProcess p = process.get();
        if (p != null) {
            p.signal(ProgramSignal.INTERRUPT);
        }
    }

    @Override
    public void killTree() {
        ChannelProcess p = process.get();
        if (p != null) {
            p.killTree();
        }
    }

    /**
     * The channel's own exit future once launched: a caller waiting on it is woken by the JDK's reaper directly (a
     * dependent future would first hand over to another pool).
     */
    @Override
    public CompletableFuture<Integer> exit() {
        ChannelProcess p = process.get();
        return p == null ? notLaunched : p.exit();
    }

    @Override
    public void release() {
        RuntimeException failure = null;
        ProgramSession s = session;
        if (s != null) {
            try {
                s.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        deleteConnectionFile();
        if (failure != null) {
            throw failure;
        }
    }

    private void deleteConnectionFile() {
        try {
            Files.deleteIfExists(connectionFile);
        } catch (IOException e) {
            LOG.warn("kernel {}: could not delete its connection file: {}", label, e.getClass().getSimpleName());
        }
    }
}
