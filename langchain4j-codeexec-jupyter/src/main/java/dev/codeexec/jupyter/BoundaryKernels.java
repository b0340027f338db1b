package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.spi.InterpreterEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.zeromq.ZContext;

/**
 * Python kernels inside another engine's boundary, one per workspace: what a sandbox or container engine composes to
 * offer stateful python cells ({@code InterpreterEngine.cells}). Each kernel is started through the engine's
 * {@link KernelLauncher}, so it gets what a run gets (mounts, user, limits, network policy, environment policy), and
 * is spoken to with the Jupyter engine's own client and cell handling; no network path into or out of the boundary is
 * opened.
 *
 * <p>The transport: the engine starts {@code python -I -c <relay>} (a relay in the Python standard library) as a
 * program of the workspace; the relay starts ipykernel as a child with ZeroMQ transport {@code ipc} in a private 0700
 * directory (Unix sockets: nothing listens on a TCP port inside the boundary) and carries each of the client's
 * connections as frames over its stdin and stdout. On the host, the client connects to listeners on {@code 127.0.0.1}
 * that accept only this JVM's own connections (Linux: the peer's socket must be among this process's open files), so
 * no other host process reaches the kernel or reads its output. The signing key travels in the relay's first stdin
 * frame, never on argv. What the relay writes is treated as hostile (it runs as the workspace's user): a broken stream
 * ends that kernel, never the engine.
 *
 * <p>Cells behave as on the Jupyter engine: state persists between cells; past its timeout a cell is interrupted
 * ({@code interrupt_request}, then SIGINT to the kernel's process group through the relay) and the kernel survives,
 * or is stopped when it does not return to idle; a kernel that dies (its relay ended, or it missed heartbeats) is
 * reported and the next cell starts a fresh one; rich outputs are saved as {@code out/display_<n>.<ext>} through the
 * engine's {@link WorkspaceFS}. A kernel idle for {@link KernelOptions#idleTimeout()} is stopped; the next cell's
 * result begins with a line that says so.
 *
 * <h2>Threads and locks</h2>
 * Per kernel: the client's socket reader (see {@link KernelClient}), an acceptor and one thread per connection of the
 * relay (see {@link KernelRelay}); the engine's backend delivers the relay's output on its own thread. One timer
 * thread per instance stops idle kernels. Per workspace one lock serialises cells, starts and restarts
 * ({@link KernelSlot}); workspaces run in parallel; the slot table is a concurrent map, never held while waiting.
 */
public final class BoundaryKernels implements AutoCloseable {

    /** How long {@link #outputsSeenEmpty} waits for the relay's answer before the engine collects as usual. */
    public static final Duration OUTPUTS_LOOK_TIMEOUT = Duration.ofSeconds(2);

    private final String engineName;
    private final KernelOptions options;
    private final KernelLauncher launcher;
    private final ObjectMapper json = new ObjectMapper();
    private final KernelTimings timings;
    private final DisplayFiles displays;
    private final IdleStops idle;
    private final Map<String, KernelSlot> slots = new ConcurrentHashMap<>();
    private final AtomicInteger kernelCount = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object lazyLock = new Object();
    /** Created with the first kernel. Guarded by {@code lazyLock}. */
    private ZContext zmq;

    /**
     * @param engineName names threads and log lines
     * @param options    the Python inside the boundary and the time bounds
     * @param launcher   the engine's run planning ({@code AbstractEngine.prepare})
     * @param fs         the engine's file system: rich outputs are saved under {@code out/} through it
     * @throws dev.codeexec.engine.InvalidSpecException for a time bound that is not positive
     */
    public BoundaryKernels(String engineName, KernelOptions options, KernelLauncher launcher, WorkspaceFS fs) {
        this.engineName = Objects.requireNonNull(engineName, "engineName");
        this.options = Objects.requireNonNull(options, "options");
        this.launcher = Objects.requireNonNull(launcher, "launcher");
        this.timings = KernelTimings.of(options.startTimeout(), options.interruptGrace(),
                options.heartbeatInterval(), options.heartbeatTimeout());
        this.displays = new DisplayFiles(Objects.requireNonNull(fs, "fs"));
        this.idle = options.idleTimeout() == null ? null
                : new IdleStops("codeexec-" + engineName + "-kernel-idle", options.idleTimeout());
    }

    /**
     * The cells of {@code ws}'s kernel, for {@code InterpreterEngine.cells}: the kernel starts with the first cell
     * (bounded by the start timeout; {@link BackendUnavailableException} when none can be started, for example when
     * the Python inside the boundary cannot import ipykernel) and is reused by the next ones.
     */
    public InterpreterEngine.CellRunner cells(Workspace ws) {
        requireOpen();
        return (code, timeout, cap) -> {
            KernelSlot.Outcome o = slot(ws).run(code, timeout, cap, () -> displays.of(ws));
            return new BlockPrograms.Outcome(o.text(), o.exitCode(), o.timedOut(), o.truncated());
        };
    }

    /**
     * Stops {@code ws}'s kernel (a {@code shutdown_request}, then a kill) and starts a fresh one, waiting until it
     * answers. A cell running meanwhile ends with a result that says the kernel was lost.
     *
     * @throws BackendUnavailableException when the new kernel cannot be started
     */
    public void restartKernel(Workspace ws) {
        requireOpen();
        slot(ws).restart();
    }

    /**
     * Holds (or releases) the heartbeat watch of {@code ws}'s kernel while its engine pauses the kernel's processes
     * (a sandbox freezes them while it works on the workspace): a frozen kernel cannot echo and must not be declared
     * dead for it, however long the pause. Released, the watch starts again from that moment. No effect without a
     * kernel.
     */
    public void holdHeartbeat(Workspace ws, boolean held) {
        KernelSlot s = slots.get(ws.id());
        Kernel k = s == null ? null : s.current();
        if (k != null) {
            k.holdHeartbeat(held);
        }
    }

    /**
     * True when {@code ws}'s kernel is alive and its relay sees {@code out/} as a real directory with no entry now
     * (asked through the relay, bounded by {@link #OUTPUTS_LOOK_TIMEOUT}): an engine then knows, without a round trip
     * of its own, that collecting {@code out/} would find nothing. False in every other case (no kernel, no answer in
     * time, an entry, a link), when the engine collects as usual. The answer comes from inside the boundary: trust it
     * only to skip reading the workspace's own files, never for a decision about the host.
     */
    public boolean outputsSeenEmpty(Workspace ws) {
        return outputsSeenEmpty(ws, OUTPUTS_LOOK_TIMEOUT);
    }

    /**
     * {@link #outputsSeenEmpty(Workspace)} waiting up to {@code timeout}: a test that asserts the relay's answer waits
     * as long as a loaded machine needs, where the engine would rather collect as usual.
     */
    boolean outputsSeenEmpty(Workspace ws, Duration timeout) {
        KernelSlot s = slots.get(ws.id());
        Kernel k = s == null ? null : s.current();
        return k != null && k.outputsSeenEmpty(timeout.toNanos());
    }

    /** Stops {@code ws}'s kernel, if any (before the workspace is removed). Idempotent. */
    public void stopKernel(Workspace ws) {
        KernelSlot s = slots.remove(ws.id());
        displays.forget(ws.id());
        if (s != null) {
            s.close();
        }
    }

    /** Stops every kernel (in parallel, bounded) and the idle timer. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<KernelSlot> all = new ArrayList<>(slots.values());
        slots.clear();
        List<KernelRequest> shutdowns = new ArrayList<>();
        for (KernelSlot s : all) {
            shutdowns.add(s.beginClose());
        }
        RuntimeException failure = null;
        for (int i = 0; i < all.size(); i++) {
            try {
                all.get(i).finishClose(shutdowns.get(i));
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (idle != null) {
            idle.close();
        }
        synchronized (lazyLock) {
            if (zmq != null) {
                zmq.close();
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** The workspace's current kernel, or null: for tests. */
    Kernel kernel(Workspace ws) {
        KernelSlot s = slots.get(ws.id());
        return s == null ? null : s.current();
    }

    /** Whether the idle timeout stopped the workspace's kernel and no cell ran since: for tests. */
    boolean stoppedIdle(Workspace ws) {
        KernelSlot s = slots.get(ws.id());
        return s != null && s.stoppedIdle();
    }

    private KernelSlot slot(Workspace ws) {
        KernelSlot s = slots.computeIfAbsent(ws.id(), id -> new KernelSlot(id, () -> startKernel(ws), json,
                timings.interruptGrace(), idle));
        if (closed.get()) {
            slots.remove(ws.id(), s);
            s.close();
            requireOpen();
        }
        return s;
    }

    private Kernel startKernel(Workspace ws) {
        requireOpen();
        Kernel.Settings settings;
        synchronized (lazyLock) {
            requireOpen();
            if (zmq == null) {
                zmq = KernelContexts.create("codeexec-" + engineName + "-zmq-");
            }
            settings = new Kernel.Settings(zmq, json, timings.start(), timings.heartbeatInterval(),
                    timings.heartbeatTimeout());
        }
        String label = engineName + "-" + ws.id() + "-k" + kernelCount.incrementAndGet();
        Kernel k = Kernel.start(settings, label, () -> new KernelRelay(label, launcher, ws, options.python()));
        if (closed.get()) {
            k.stop(json, "the engine was closed while the kernel started");
            throw new CodeExecException("the " + engineName + " engine's kernels are closed");
        }
        return k;
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new CodeExecException("the " + engineName + " engine's kernels are closed");
        }
    }
}
