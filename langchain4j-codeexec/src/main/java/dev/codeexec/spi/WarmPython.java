package dev.codeexec.spi;

import dev.codeexec.CodeLanguage;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The warm path of python blocks ({@link EngineBuilder#warmPython}): a <em>spare</em> interpreter per workspace,
 * started ahead through the engine's own {@link AbstractEngine#prepare} with the spec the fresh path would use
 * (same working directory, environment, limits and boundary), waiting for one line on its standard input. A python
 * block, written to {@code runs/} as on the fresh path, is handed to the spare by sending its path; the spare runs
 * it as {@code __main__} and exits as {@code python3 <file>} would. Each spare serves exactly one block: no state
 * passes from one block to the next. After a block, a new spare is started for the workspace's next one.
 *
 * <p>Rules:
 * <ul>
 *   <li>a spare is started through {@link AbstractEngine#prepare} and the engine's channel, not as a session, so a
 *       backend's override of {@code runProgram} or {@code startProgram} (a per-workspace gate, say) is not taken;
 *       an engine that needs one keeps {@link AbstractEngine#warmSpareKey} null;</li>
 *   <li>at most one spare per workspace and {@link #MAX_SPARES} per engine; a spare unused for {@link #IDLE_LIFE}
 *       is killed, and so is every spare when the engine closes;</li>
 *   <li>a spare is discarded, and the block runs fresh, when any other program ran or started in its workspace
 *       since the spare started, when the engine's {@link AbstractEngine#warmSpareKey key} of the workspace changed
 *       (the spare's boundary would no longer be the one a fresh run gets), or when the spare has died;</li>
 *   <li>the block's timeout counts from the hand-off; past it the spare's whole tree is killed;</li>
 *   <li>nothing fails a block because of the warm path: anything that goes wrong before the hand-off falls back to
 *       the fresh run;</li>
 *   <li>a spare is no session: it is not in the engine's sessions and never shows in a session listing. It notices
 *       that its workspace was removed (its working directory is gone) and exits by itself.</li>
 * </ul>
 *
 * <p>Thread roles: a block's caller hands off and waits, then asks for the next spare; the start thread
 * ({@code codeexec-warm-python-start-N}) starts it off the caller's path, so that the interpreter starts while the
 * model thinks; the housekeeping thread ({@code codeexec-warm-python-N}) kills idle spares; the channel's threads
 * write output into the spare's buffers. The map of slots is the only shared state, and whoever removes a slot from
 * it (atomically) owns it: it either hands a block to its spare or discards it, which kills the spare as soon as
 * its start completes. A block that finds its spare still starting waits for it ({@link #START_WAIT} at most).
 */
final class WarmPython implements BlockPrograms.ScriptRunner, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WarmPython.class);

    /** {@value}: spares per engine at most. */
    static final int MAX_SPARES = 16;

    /** How long a spare may wait for a block before it is killed. */
    static final Duration IDLE_LIFE = Duration.ofMinutes(2);

    /** The life a spare's launch declares to channels that bound it; the block's own timeout is enforced here. */
    static final Duration LAUNCH_LIFE = Duration.ofHours(6);

    /**
     * What a spare runs ({@code python3 -c STUB}). Before the hand-off it uses only modules loaded at start-up (the
     * working directory is taken off {@code sys.path} first, so nothing in {@code work/} runs before the block), and
     * polls its working directory so that it exits once its workspace is removed. On the hand-off it closes nothing
     * and inherits nothing of its own: stdin is at its end (the engine closed it), {@code sys.argv}, {@code sys.path[0]}
     * and {@code __file__} are what {@code python3 <file>} sets, the block runs in a new {@code __main__} module,
     * {@link SystemExit} ends it as it would end the interpreter, and an uncaught exception is reported through
     * {@code sys.excepthook} without this stub's frame, then exits with status 1.
     */
    static final String STUB = String.join("\n",
            "import sys, os",
            "del sys.path[0]",
            "import select",
            "def _line():",
            "    b = b''",
            "    while not b.endswith(b'\\n'):",
            "        if not select.select([0], [], [], 0.25)[0]:",
            "            if os.stat('.').st_nlink == 0:",
            "                os._exit(0)",
            "            continue",
            "        c = os.read(0, 4096)",
            "        if not c:",
            "            os._exit(0)",
            "        b += c",
            "    return b[:-1].decode('utf-8', 'surrogateescape')",
            "import types",
            "_p = _line()",
            "del _line",
            "_f = _p if os.path.isabs(_p) else os.path.join(os.getcwd(), _p)",
            "sys.argv[:] = [_p]",
            "sys.path.insert(0, os.path.dirname(os.path.realpath(_p)))",
            "_m = types.ModuleType('__main__')",
            "_m.__file__ = _f",
            "_m.__builtins__ = __builtins__",
            "_m.__cached__ = None",
            "sys.modules['__main__'] = _m",
            "with open(_f, 'rb') as _s:",
            "    _c = compile(_s.read(), _f, 'exec')",
            "try:",
            "    exec(_c, _m.__dict__)",
            "except SystemExit:",
            "    raise",
            "except BaseException as _e:",
            "    _e.__traceback__ = _e.__traceback__.tb_next",
            "    sys.excepthook(type(_e), _e, _e.__traceback__)",
            "    sys.exit(1)",
            "");

    /** How long a block waits for its workspace's spare when that is still being started. */
    static final Duration START_WAIT = Duration.ofSeconds(5);

    private final AbstractEngine engine;
    /** Each workspace's spare: a slot is put in when its start is decided, and owned by whoever removes it. */
    private final Map<String, Slot> spares = new ConcurrentHashMap<>();
    private final AtomicLong warmBlocks = new AtomicLong();
    private final LongSupplier nanoClock;
    /** Starts spares off the block's path; in tests, on the caller's thread. */
    private final Executor starter;
    private final ExecutorService ownStarter;
    private final ScheduledExecutorService housekeeping;
    private volatile boolean closed;

    WarmPython(AbstractEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.nanoClock = System::nanoTime;
        this.ownStarter = Executors.newSingleThreadExecutor(IoThreads.daemonThreads("codeexec-warm-python-start-"));
        this.starter = ownStarter;
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(IoThreads.daemonThreads("codeexec-warm-python-"));
        this.housekeeping.scheduleWithFixedDelay(this::killIdle, 10, 10, TimeUnit.SECONDS);
    }

    /** For tests: a fake clock, spares started on the caller's thread, no housekeeping (the test calls it). */
    WarmPython(AbstractEngine engine, LongSupplier nanoClock) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.nanoClock = nanoClock;
        this.starter = Runnable::run;
        this.ownStarter = null;
        this.housekeeping = null;
    }

    /** Python blocks since the engine was built that ran in a warm process. */
    long warmBlocks() {
        return warmBlocks.get();
    }

    /** Spares alive or being started now (for tests and diagnostics). */
    int spareCount() {
        return spares.size();
    }

    /** For tests: waits until the workspace's spare, if one is being started, has started (or failed to). */
    void awaitStarted(String workspaceId) {
        Slot slot = spares.get(workspaceId);
        if (slot != null) {
            IoThreads.await(slot.started, START_WAIT);
        }
    }

    @Override
    public RunResult run(CodeLanguage language, Workspace ws, RunProgramSpec fresh) {
        if (language != CodeLanguage.PYTHON) {
            return engine.runner().runProgram(ws, fresh);
        }
        Slot slot = spares.remove(ws.id());
        Spare spare = slot == null ? null : slot.take();
        RunResult r = spare == null ? null : handOff(spare, ws, fresh);
        if (r != null) {
            warmBlocks.incrementAndGet();
            LOG.debug("python block {} ran in a warm process in workspace {}", fresh.args(), ws.id());
        } else {
            LOG.debug("python block {} runs in a fresh process in workspace {}", fresh.args(), ws.id());
            r = engine.runner().runProgram(ws, fresh);
        }
        startSpare(ws, fresh);
        return r;
    }

    /** Kills the workspace's spare, if any: another program runs there, or the workspace goes. */
    void discard(String workspaceId) {
        Slot slot = spares.remove(workspaceId);
        if (slot != null) {
            slot.discard();
        }
    }

    /** Kills spares unused for {@link #IDLE_LIFE} and forgets dead ones and failed starts. */
    void killIdle() {
        long now = nanoClock.getAsLong();
        for (Map.Entry<String, Slot> e : spares.entrySet()) {
            Slot slot = e.getValue();
            if (slot.deadOrIdle(now) && spares.remove(e.getKey(), slot)) {
                slot.discard();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        if (housekeeping != null) {
            housekeeping.shutdownNow();
        }
        if (ownStarter != null) {
            ownStarter.shutdown();
        }
        for (String id : List.copyOf(spares.keySet())) {
            Slot slot = spares.remove(id);
            if (slot != null) {
                // Waits for a start in flight, so that no spare outlives the engine's close.
                IoThreads.await(slot.started, START_WAIT);
                slot.discard();
            }
        }
    }

    /** Hands the block to the spare and waits for it; null when the hand-off did not happen (the spare is gone). */
    private RunResult handOff(Spare spare, Workspace ws, RunProgramSpec fresh) {
        if (spare.process.exit().isDone() || !Objects.equals(spare.key, engine.warmSpareKey(ws))
                || !spare.spec.equals(spareSpec(fresh))) {
            spare.kill();
            return null;
        }
        String path = fresh.args().get(0) + "\n";
        try {
            OutputStream in = spare.process.stdin();
            in.write(path.getBytes(StandardCharsets.UTF_8));
            in.close();
        } catch (IOException | RuntimeException e) {
            // The spare died before it could take the block: the block runs fresh.
            spare.kill();
            return null;
        }
        return spare.finish(ws, fresh.timeout());
    }

    /**
     * Starts the workspace's next spare off the caller's path; a failure only means the next block runs fresh. The
     * engine's key is taken now, before the start: a change after it shows at the hand-off.
     */
    private void startSpare(Workspace ws, RunProgramSpec fresh) {
        if (closed || engine.isClosed() || spares.size() >= MAX_SPARES) {
            return;
        }
        Object key = engine.warmSpareKey(ws);
        if (key == null) {
            return;
        }
        Slot slot = new Slot(nanoClock.getAsLong());
        if (spares.putIfAbsent(ws.id(), slot) != null) {
            return;
        }
        RunProgramSpec spec = spareSpec(fresh);
        Runnable start = () -> {
            Spare spare = null;
            try {
                if (!closed && spares.get(ws.id()) == slot) {
                    spare = Spare.start(engine, ws, spec, key);
                }
            } catch (RuntimeException | Error e) {
                LOG.debug("no warm python spare for workspace {}: {}", ws.id(), e.toString());
            }
            // Removed meanwhile? Its remover discarded the slot, which kills the spare now that it completes.
            slot.started.complete(spare);
        };
        try {
            starter.execute(start);
        } catch (RejectedExecutionException e) {
            spares.remove(ws.id(), slot);
            slot.started.complete(null);
        }
    }

    /** A workspace's spare, started or being started. */
    private static final class Slot {

        final long createdNanos;
        /** Completes with the spare, or null when none could be started. */
        final CompletableFuture<Spare> started = new CompletableFuture<>();

        Slot(long createdNanos) {
            this.createdNanos = createdNanos;
        }

        /** The spare for a block, waiting for a start in flight; null when there is none (then it is discarded). */
        Spare take() {
            if (IoThreads.await(started, START_WAIT)) {
                return started.join();
            }
            discard();
            return null;
        }

        /** Kills the spare: now when started, or as soon as its start completes. */
        void discard() {
            started.whenComplete((s, e) -> {
                if (s != null) {
                    s.kill();
                }
            });
        }

        boolean deadOrIdle(long now) {
            if (!started.isDone()) {
                return false;
            }
            Spare s = started.join();
            return s == null || s.process.exit().isDone() || now - createdNanos > IDLE_LIFE.toNanos();
        }
    }

    /** The fresh spec with the stub for the script and the launch life for the timeout. */
    static RunProgramSpec spareSpec(RunProgramSpec fresh) {
        return fresh.toBuilder().args("-c", STUB).stdin(null).timeout(LAUNCH_LIFE).build();
    }

    /** One started spare: its run, process and output buffers. */
    private static final class Spare {

        final AbstractEngine engine;
        final PreparedRun run;
        final ChannelProcess process;
        final RunProgramSpec spec;
        final Object key;
        final BoundedOutput out;
        final BoundedOutput err;
        final OutputSaving saving;
        final String folder;
        private final AtomicBoolean ended = new AtomicBoolean();

        private Spare(AbstractEngine engine, PreparedRun run, ChannelProcess process, RunProgramSpec spec, Object key,
                      BoundedOutput out, BoundedOutput err, OutputSaving saving, String folder) {
            this.engine = engine;
            this.run = run;
            this.process = process;
            this.spec = spec;
            this.key = key;
            this.out = out;
            this.err = err;
            this.saving = saving;
            this.folder = folder;
        }

        static Spare start(AbstractEngine engine, Workspace ws, RunProgramSpec spec, Object key) {
            PreparedRun run = engine.prepare(ws, spec);
            String folder = run.runFolder();
            OutputSaving saving = engine.outputSaving();
            if (saving != null && !saving.claim(folder)) {
                saving = null;
            }
            int cap = run.launch().maxOutputBytes();
            BoundedOutput out = new BoundedOutput(cap, saving == null ? null : saving.out);
            BoundedOutput err = new BoundedOutput(cap, saving == null ? null : saving.err);
            SafeListener listener = new SafeListener(run.launch().listener());
            engine.runStarted(folder);
            try {
                ChannelProcess p = run.channel().start(run.launch(), (stream, b, off, len) -> {
                    (stream == StdStream.STDOUT ? out : err).write(b, off, len);
                    listener.onOutput(stream, b, off, len);
                });
                return new Spare(engine, run, p, spec, key, out, err, saving, folder);
            } catch (RuntimeException | Error e) {
                engine.runFinished(folder);
                run.release();
                if (saving != null) {
                    saving.discard();
                }
                throw e;
            }
        }

        /** Waits for the block as {@link ProgramRuns#run} waits for a run, from the hand-off on. */
        RunResult finish(Workspace ws, Duration timeout) {
            long start = System.nanoTime();
            try {
                boolean timedOut = !IoThreads.await(process.exit(), timeout);
                if (Thread.currentThread().isInterrupted()) {
                    process.killTree();
                    throw new CodeExecException("interrupted while waiting for the program; it was killed");
                }
                if (timedOut || !IoThreads.await(process.outputEnd(), ProgramRuns.DRAIN_GRACE)) {
                    process.killTree();
                    IoThreads.await(process.outputEnd(), ProgramRuns.KILL_DRAIN);
                }
                int exitCode = timedOut ? -1 : process.exit().join();
                RunResult r = run.check(new RunResult(out.text(), err.text(), exitCode,
                        Duration.ofNanos(System.nanoTime() - start), timedOut, out.truncated(), err.truncated()));
                return saving == null ? r : saving.save(ws, r);
            } catch (RuntimeException | Error e) {
                process.killTree();
                throw e;
            } finally {
                end();
                engine.trimHistoryOf(ws);
            }
        }

        /** Kills an unused spare and releases its run. */
        void kill() {
            try {
                process.killTree();
                IoThreads.await(process.exit(), ProgramRuns.KILL_DRAIN);
            } finally {
                end();
            }
        }

        private void end() {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            try {
                engine.runFinished(folder);
                run.release();
            } finally {
                if (saving != null) {
                    saving.discard();
                }
            }
        }
    }
}
