package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.jupyter.JupyterMessage.Channel;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import dev.codeexec.spi.ProgramSignal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * One kernel: its process ({@link KernelProcess}: a host process of the Jupyter engine, or a relay inside another
 * engine's boundary) and its {@link KernelClient}. Both transports share everything here.
 *
 * <p>Start: the process is launched and the client's sockets connected, then {@code kernel_info_request} is repeated
 * on shell until a {@code kernel_info_reply} has arrived <em>and</em> an IOPub message for one of the requests (the
 * subscription has reached the kernel: a SUB misses what is published before that). Then the heartbeat is watched and
 * the process told that the kernel is ready. A process that asks for it ({@link PortsTaken}: a host kernel's ports
 * were taken by someone else meanwhile) is started again.
 *
 * <p>Death is noticed twice over: the process's end (reported by the process) and missed heartbeats (from the socket
 * reader, which then kills the process tree). Either wakes every waiting request. Stop: a {@code shutdown_request} on
 * control, a bounded wait for the reply and the exit, then the tree is killed; resources are released once
 * ({@link #release()}).
 *
 * <p>Thread-safe: state is atomics; methods that wait (start, {@link #finishShutdown}) are called by one caller at a
 * time by the owner ({@link KernelSlot}), the others from any thread.
 */
final class Kernel {

    private static final Logger LOG = LoggerFactory.getLogger(Kernel.class);

    /** A kernel lives until it is stopped: its session's life-time limit is only a backstop. */
    static final Duration LIFETIME = Duration.ofDays(3650);
    /** How long a {@code shutdown_request} may take to be answered, and the process to exit after it. */
    static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(3);
    /** The start is tried this many times when the process asks for it ({@link PortsTaken}). */
    private static final int START_ATTEMPTS = 3;
    /**
     * Until the kernel answers, a request every 500 ms (earlier ones wait in the DEALER until it binds). Once it did,
     * only the IOPub subscription is missing, which takes a moment to reach the kernel: then every 50 ms.
     */
    private static final long HANDSHAKE_RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long SUBSCRIPTION_RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /**
     * What every kernel of an engine shares.
     *
     * @param zmq          the engine's jeromq context
     * @param json         the engine's JSON mapper
     * @param startTimeout how long a kernel may take to answer the handshake
     * @param hbInterval   heartbeat period
     * @param hbTimeout    no heartbeat echo for this long means dead
     */
    record Settings(ZContext zmq, ObjectMapper json, Duration startTimeout, Duration hbInterval, Duration hbTimeout) {
    }

    /** What {@code kernel_info_reply} said. */
    record Info(String language, String languageVersion, String implementation, String implementationVersion,
                String protocolVersion) {
    }

    private final String label;
    private final KernelProcess process;
    private final KernelClient client;
    private final AtomicBoolean shutdownRequested = new AtomicBoolean();
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile Info info;

    private Kernel(Settings s, String label, KernelProcess process) {
        this.label = label;
        this.process = process;
        this.client = new KernelClient(s.zmq(), process.connection(), label, s.json(), s.hbInterval(),
                s.hbTimeout(), this::killTree);
    }

    /**
     * Starts a kernel and waits until it answers.
     *
     * @param label     names its threads and log lines (no host path)
     * @param processes makes the kernel's process, once per attempt
     * @throws BackendUnavailableException when it cannot be started or does not become ready in time; nothing of it
     *                                     is left running
     */
    static Kernel start(Settings s, String label, Supplier<KernelProcess> processes) {
        BackendUnavailableException last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            Kernel k = new Kernel(s, label, processes.get());
            try {
                k.process.launch(k.client::markDead);
                k.client.start();
                k.handshake(s);
                return k;
            } catch (PortsTaken e) {
                last = e;
                LOG.info("kernel {}: its ports were taken before it could bind them; starting again", label);
            } catch (CodeExecException | Error e) {
                k.killTree();
                k.release();
                throw e;
            } catch (RuntimeException e) {
                // The client's sockets could not be set up (the engine is closing, say): nothing ran.
                k.killTree();
                k.release();
                throw new BackendUnavailableException("the Jupyter kernel could not start: "
                        + e.getClass().getSimpleName() + " (" + e.getMessage() + ")", e);
            }
            k.killTree();
            k.release();
        }
        throw last;
    }

    private void handshake(Settings s) {
        long start = System.nanoTime();
        long deadline = start + s.startTimeout().toNanos();
        BlockingQueue<JupyterMessage> replies = new LinkedBlockingQueue<>();
        List<KernelRequest> sent = new ArrayList<>();
        JsonNode reply = null;
        boolean iopubSeen = false;
        long nextSend = start;
        try {
            while (reply == null || !iopubSeen) {
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    throw notReady(s, reply != null);
                }
                if (now - nextSend >= 0) {
                    sent.add(client.request(Channel.SHELL, "kernel_info_request", s.json().createObjectNode(), null,
                            replies));
                    nextSend = now + (reply == null ? HANDSHAKE_RESEND_NANOS : SUBSCRIPTION_RESEND_NANOS);
                }
                JupyterMessage m = replies.poll(Math.min(deadline, nextSend) - now, TimeUnit.NANOSECONDS);
                if (m == null) {
                    continue;
                }
                if (m.isDeath()) {
                    throw died(s);
                }
                if (m.channel() == Channel.SHELL && m.msgType().equals("kernel_info_reply")) {
                    if (reply == null) {
                        nextSend = Math.min(nextSend, System.nanoTime() + SUBSCRIPTION_RESEND_NANOS);
                    }
                    reply = m.content(s.json());
                } else if (m.channel() == Channel.IOPUB) {
                    iopubSeen = true;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while the Jupyter kernel was starting; it was stopped", e);
        } finally {
            sent.forEach(KernelRequest::close);
        }
        JsonNode lang = reply.path("language_info");
        info = new Info(lang.path("name").asText(""), lang.path("version").asText(""),
                reply.path("implementation").asText(""), reply.path("implementation_version").asText(""),
                reply.path("protocol_version").asText(""));
        if (!info.language().equals("python")) {
            throw new BackendUnavailableException("the Jupyter kernel speaks '" + info.language() + "', not python: "
                    + "this engine runs python cells. Configure a Python kernel.");
        }
        client.enableHeartbeat();
        process.ready();
        LOG.info("kernel {} ready in {} ms (python {}, {} {}, protocol {})", label,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), info.languageVersion(),
                info.implementation(), info.implementationVersion(), info.protocolVersion());
    }

    private BackendUnavailableException notReady(Settings s, boolean replied) {
        String log = logTail();
        LOG.warn("kernel {} did not become ready within {} s; its log:\n{}", label, s.startTimeout().toSeconds(), log);
        return new BackendUnavailableException("the Jupyter kernel did not become ready within "
                + s.startTimeout().toSeconds() + " s (" + (replied ? "it answered kernel_info but no IOPub message "
                + "arrived" : "no kernel_info_reply") + "); it was stopped" + lastLine(log)
                + ". Check that the kernel starts (its log is in the application log), or raise kernelStartTimeout.");
    }

    private BackendUnavailableException died(Settings s) {
        BackendUnavailableException e = process.startFailure(client.deathReason());
        if (!(e instanceof PortsTaken)) {
            LOG.warn("kernel {} failed to start ({}); its log:\n{}", label, client.deathReason(), logTail());
        }
        return e;
    }

    /** The last lines of the kernel's own output (its log), for an operator. */
    String logTail() {
        return process.logTail();
    }

    /** {@code " (last line of its log: ...)"} for a message, or empty. */
    static String lastLine(String log) {
        List<String> lines = log.strip().lines().filter(l -> !l.isBlank()).toList();
        if (lines.isEmpty()) {
            return "";
        }
        String l = lines.get(lines.size() - 1).strip();
        return " (last line of its log: " + (l.length() > 300 ? l.substring(0, 300) + "..." : l) + ")";
    }

    /** The kernel could not bind its ports: start again with new ones. */
    static final class PortsTaken extends BackendUnavailableException {
        PortsTaken(String reason) {
            super("the Jupyter kernel could not bind its ports (" + reason + ")");
        }
    }

    static String describeExit(Integer status) {
        if (status == null) {
            return "the kernel process ended";
        }
        if (status > 128 && status < 128 + 65) {
            int sig = status - 128;
            String name = switch (sig) {
                case 9 -> " (SIGKILL)";
                case 15 -> " (SIGTERM)";
                case 2 -> " (SIGINT)";
                case 11 -> " (SIGSEGV)";
                case 6 -> " (SIGABRT)";
                default -> "";
            };
            return "the kernel process was killed by signal " + sig + name;
        }
        return "the kernel process exited with status " + status;
    }

    // ---- use ----

    String label() {
        return label;
    }

    Info info() {
        return info;
    }

    /** True until the kernel is known dead or stopped. */
    boolean alive() {
        return client.deathReason() == null;
    }

    /** Why it is gone, or null. */
    String deathReason() {
        return client.deathReason();
    }

    /** The exit status of its process once it ended, else null. */
    Integer exitStatus() {
        return process.exitStatus();
    }

    /** Its process. */
    KernelProcess process() {
        return process;
    }

    /** A host kernel's connection file (its processes' command lines hold it); null for another transport. */
    Path connectionFile() {
        return process instanceof HostKernelProcess h ? h.connectionFile() : null;
    }

    /** Messages the client dropped (bad signature, malformed). */
    long droppedMessages() {
        return client.droppedMessages();
    }

    /** The socket reader's rounds so far and those that found no work: a diagnostic against spinning. */
    long[] readerRounds() {
        return client.readerRounds();
    }

    /** Sends a cell; its output, reply and status arrive on the returned request. */
    KernelRequest execute(String code, Budget budget, ObjectMapper json) {
        ObjectNode c = json.createObjectNode();
        c.put("code", code);
        c.put("silent", false);
        c.put("store_history", true);
        c.set("user_expressions", json.createObjectNode());
        // No stdin: a kernel waiting for input nobody can give would block the cell until its timeout.
        c.put("allow_stdin", false);
        // One cell at a time is sent, and a failing block stops the blocks after it here, so the kernel has nothing
        // to abort; with true, ipykernel also aborts a request that arrives just after a failed cell (a race).
        c.put("stop_on_error", false);
        return client.request(Channel.SHELL, "execute_request", c, budget, null);
    }

    /** Asks the kernel to interrupt the running cell ({@code interrupt_request} on control). */
    KernelRequest interrupt(ObjectMapper json) {
        return client.request(Channel.CONTROL, "interrupt_request", json.createObjectNode(), null, null);
    }

    /** SIGINT to the kernel (not to its launcher): the fallback when the interrupt request was not acted on. */
    void signalInterrupt() {
        if (alive()) {
            process.signalInterrupt();
        }
    }

    /** Declares the kernel dead and kills its process tree at once; {@link #release()} still follows. */
    void kill(String reason) {
        client.markDead(reason);
        killTree();
    }

    /** Kills the process tree; does not block. */
    void killTree() {
        process.killTree();
    }

    /** Sends {@code shutdown_request {"restart": false}} on control; does not wait. Once. */
    KernelRequest beginShutdown(ObjectMapper json) {
        if (!alive() || !shutdownRequested.compareAndSet(false, true)) {
            return null;
        }
        ObjectNode c = json.createObjectNode();
        c.put("restart", false);
        return client.request(Channel.CONTROL, "shutdown_request", c, null, null);
    }

    /**
     * Waits (bounded by {@link #SHUTDOWN_WAIT} each) for the shutdown reply and the process's exit, kills the tree if
     * it is still there, and releases everything.
     */
    void finishShutdown(KernelRequest shutdown, String reason) {
        try {
            if (shutdown != null) {
                long deadline = System.nanoTime() + SHUTDOWN_WAIT.toNanos();
                try {
                    for (JupyterMessage m; (m = shutdown.poll(deadline - System.nanoTime())) != null; ) {
                        if (m.isDeath() || m.msgType().equals("shutdown_reply")) {
                            break;
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    shutdown.close();
                }
                if (!Thread.currentThread().isInterrupted()) {
                    try {
                        process.exit().get(SHUTDOWN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (Exception e) {
                        // Not gone in time (or failed to report): killed below.
                    }
                }
            }
            client.markDead(reason);
        } finally {
            killTree();
            release();
        }
    }

    /** Graceful stop: {@link #beginShutdown} then {@link #finishShutdown}. */
    void stop(ObjectMapper json, String reason) {
        finishShutdown(beginShutdown(json), reason);
    }

    /**
     * Releases what is left once the kernel is dead or stopped: the client's sockets and reader, the process (killed
     * if still there) and what it holds. Idempotent.
     */
    void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        client.markDead("the kernel was released");
        RuntimeException failure = null;
        try {
            client.close();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            process.release();
        } catch (RuntimeException e) {
            failure = failure == null ? e : failure;
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Whether the kernel's side sees {@code out/} empty now ({@link KernelProcess#outputsSeenEmpty}). */
    boolean outputsSeenEmpty(long timeoutNanos) {
        return alive() && process.outputsSeenEmpty(timeoutNanos);
    }

    /** Holds or releases the heartbeat watch while the engine has paused the kernel's processes. */
    void holdHeartbeat(boolean held) {
        client.holdHeartbeat(held);
    }
}
