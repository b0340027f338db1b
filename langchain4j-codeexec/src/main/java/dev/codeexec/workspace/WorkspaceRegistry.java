package dev.codeexec.workspace;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One workspace per key (a conversation), on one engine.
 *
 * <ul>
 *   <li>A key's workspace is created once, on first use, even when first calls race.</li>
 *   <li>{@link #withWorkspace} holds the key's lock for the call, so runs in one workspace are serial (unless built with
 *       {@code serialCalls(false)}); different
 *       keys proceed in parallel. Lock order: a key's lock is never held while waiting for another key's.</li>
 *   <li>Workspaces idle longer than the TTL are removed by {@link #reapIdle()}, which a background thread
 *       ({@code codeexec-workspace-reaper}) calls when a TTL is set. A workspace in use is never reaped.</li>
 *   <li>When a call finds its workspace gone ({@link WorkspaceGoneException}), the registry forgets it, and the
 *       next call creates a new one. The failed call is not retried: it may not be safe to repeat.</li>
 * </ul>
 * The registry owns the workspaces it created: {@link #close(String)} and {@link #closeAll()} remove them.
 */
public final class WorkspaceRegistry implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WorkspaceRegistry.class);

    private final Engine engine;
    private final WorkspacePolicy policy;
    private final Duration idleTtl;
    private final LongSupplier nanoClock;
    private final boolean serialCalls;
    private final RemovalListener removalListener;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper;
    private final AtomicBoolean closed = new AtomicBoolean();

    private WorkspaceRegistry(Builder b) {
        this.engine = Objects.requireNonNull(b.engine, "engine");
        this.policy = b.policy == null ? WorkspacePolicy.DEFAULT : b.policy;
        this.idleTtl = b.idleTtl;
        this.nanoClock = b.nanoClock == null ? System::nanoTime : b.nanoClock;
        this.serialCalls = b.serialCalls;
        this.removalListener = b.removalListener != null ? b.removalListener : (k, ws, why) -> { };
        if (idleTtl != null && b.startReaper) {
            long period = Math.max(1000, idleTtl.toMillis() / 2);
            this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "codeexec-workspace-reaper");
                t.setDaemon(true);
                return t;
            });
            reaper.scheduleWithFixedDelay(this::reapQuietly, period, period, TimeUnit.MILLISECONDS);
        } else {
            this.reaper = null;
        }
    }

    /** A builder for a registry on {@code engine}. */
    public static Builder builder(Engine engine) {
        return new Builder(engine);
    }

    /** The engine whose workspaces this registry holds. */
    public Engine engine() {
        return engine;
    }

    /**
     * Runs {@code action} with the key's workspace while holding the key's lock, creating the workspace first if
     * needed.
     */
    public <T> T withWorkspace(String key, Function<Workspace, T> action) {
        return withWorkspace(key, ws -> { }, action);
    }

    /**
     * Like {@link #withWorkspace(String, Function)}, calling {@code onCreated} when this call created the workspace:
     * on the calling thread, holding the key's lock, before {@code action}. A failure of {@code onCreated} is logged
     * and does not stop the call.
     */
    public <T> T withWorkspace(String key, Consumer<Workspace> onCreated, Function<Workspace, T> action) {
        Objects.requireNonNull(onCreated, "onCreated");
        while (true) {
            requireOpen(key);
            Entry e = entry(key);
            e.lock.lock();
            try {
                requireOpen(key);
                if (e.removed) {
                    // Closed or reaped while this call waited for the lock: the key starts afresh, as if this call
                    // had come just after.
                    continue;
                }
                if (e.workspace == null) {
                    e.workspace = engine.manager().createWorkspace(key, policy);
                    notify(() -> onCreated.accept(e.workspace));
                }
                e.lastUsed = nanoClock.getAsLong();
                if (!serialCalls) {
                    e.active.incrementAndGet();
                    Workspace ws = e.workspace;
                    e.lock.unlock();
                    try {
                        return action.apply(ws);
                    } finally {
                        e.lastUsed = nanoClock.getAsLong();
                        e.active.decrementAndGet();
                        e.lock.lock();
                    }
                }
                Workspace current = e.workspace;
                try {
                    return action.apply(current);
                } catch (WorkspaceGoneException gone) {
                    Workspace lost = e.workspace;
                    e.workspace = null;
                    if (lost != null) {
                        notify(() -> removalListener.removed(key, lost, Removal.GONE));
                    }
                    throw gone;
                } finally {
                    e.lastUsed = nanoClock.getAsLong();
                }
            } finally {
                e.lock.unlock();
            }
        }
    }

    private void requireOpen(String key) {
        if (closed.get()) {
            throw new WorkspaceGoneException("the workspace registry is closed; no workspace for '" + key
                    + "' can be used");
        }
    }

    /** The key's workspace if it has one now; never creates one, and takes no lock. */
    public Optional<Workspace> find(String key) {
        Entry e = key == null ? null : entries.get(key);
        return e == null || e.removed ? Optional.empty() : Optional.ofNullable(e.workspace);
    }

    /** The key's workspace, created if needed (without holding its lock afterwards). */
    public Workspace acquire(String key) {
        return withWorkspace(key, ws -> ws);
    }

    /** The keys that currently have a workspace. */
    public List<String> keys() {
        return entries.entrySet().stream().filter(en -> en.getValue().workspace != null).map(Map.Entry::getKey)
                .sorted().toList();
    }

    /**
     * Removes the key's workspace (waiting for a running call on it to finish). Unknown keys do nothing. A call on the
     * key that was waiting meanwhile runs in a new workspace.
     */
    public void close(String key) {
        Entry e = entries.remove(key);
        if (e != null) {
            remove(e);
        }
    }

    /**
     * Removes workspaces idle for longer than the TTL whose lock is free. Returns how many were removed. Does nothing
     * when no TTL was set.
     */
    public int reapIdle() {
        if (idleTtl == null) {
            return 0;
        }
        long now = nanoClock.getAsLong();
        int n = 0;
        for (var en : entries.entrySet()) {
            Entry e = en.getValue();
            if (e.workspace != null && e.active.get() == 0 && now - e.lastUsed > idleTtl.toNanos()
                    && e.lock.tryLock()) {
                try {
                    if (now - e.lastUsed > idleTtl.toNanos() && entries.remove(en.getKey(), e)) {
                        cleanupLocked(e, Removal.IDLE);
                        n++;
                    }
                } finally {
                    e.lock.unlock();
                }
            }
        }
        return n;
    }

    /**
     * Removes every workspace; the registry stays usable (a later call on a key creates a new one). Idempotent. When
     * a cleanup fails, the other workspaces are still removed and the first failure is thrown.
     */
    public void closeAll() {
        RuntimeException first = null;
        for (String key : List.copyOf(entries.keySet())) {
            try {
                close(key);
            } catch (RuntimeException e) {
                // Keep closing the others; report the first failure with the rest suppressed.
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Same as {@link #closeAll()}, and no workspace is created afterwards. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (reaper != null) {
                reaper.shutdownNow();
            }
        }
        closeAll();
    }

    private Entry entry(String key) {
        if (key == null || key.isBlank()) {
            throw new InvalidSpecException("workspace key must not be blank");
        }
        return entries.computeIfAbsent(key, Entry::new);
    }

    private void remove(Entry e) {
        e.lock.lock();
        try {
            cleanupLocked(e, Removal.CLOSED);
        } finally {
            e.lock.unlock();
        }
    }

    private void cleanupLocked(Entry e, Removal why) {
        e.removed = true;
        Workspace ws = e.workspace;
        e.workspace = null;
        if (ws != null) {
            try {
                engine.manager().cleanup(ws);
            } finally {
                notify(() -> removalListener.removed(e.key, ws, why));
            }
        }
    }

    /** Runs a listener; its failure is logged, never passed on: the registry's bookkeeping is done already. */
    private static void notify(Runnable listener) {
        try {
            listener.run();
        } catch (RuntimeException ex) {
            LOG.warn("workspace registry listener failed", ex);
        }
    }

    /** Why a workspace left the registry. */
    public enum Removal {
        /** {@link #close(String)}, {@link #closeAll()} or {@link #close()}. */
        CLOSED,
        /** Unused for the idle TTL ({@link #reapIdle()}). */
        IDLE,
        /** A call found it gone ({@link WorkspaceGoneException}); the key gets a new one on its next call. */
        GONE
    }

    /** Told when a workspace leaves the registry. Called with the key's lock held: keep it short. */
    @FunctionalInterface
    public interface RemovalListener {
        void removed(String key, Workspace workspace, Removal why);
    }

    private void reapQuietly() {
        try {
            int n = reapIdle();
            if (n > 0) {
                LOG.debug("reaped {} idle workspace(s)", n);
            }
        } catch (RuntimeException e) {
            LOG.warn("reaping idle workspaces failed", e);
        }
    }

    private static final class Entry {
        final String key;
        final ReentrantLock lock = new ReentrantLock(true);
        volatile Workspace workspace;
        volatile long lastUsed;
        volatile boolean removed;
        /** Calls running without the lock (when calls are not serial). */
        final java.util.concurrent.atomic.AtomicInteger active = new java.util.concurrent.atomic.AtomicInteger();

        Entry(String key) {
            this.key = key;
        }
    }

    /** Builder for {@link WorkspaceRegistry}. */
    public static final class Builder {
        private final Engine engine;
        private WorkspacePolicy policy;
        private Duration idleTtl;
        private LongSupplier nanoClock;
        private boolean startReaper = true;
        private boolean serialCalls = true;
        private RemovalListener removalListener;

        private Builder(Engine engine) {
            this.engine = engine;
        }

        /** Told whenever a workspace is removed (closed, reaped idle, found gone); default none. */
        public Builder removalListener(RemovalListener listener) {
            this.removalListener = listener;
            return this;
        }

        /** How workspaces are created; default {@link WorkspacePolicy#DEFAULT}. */
        public Builder policy(WorkspacePolicy policy) {
            this.policy = policy;
            return this;
        }

        /** Remove workspaces idle for longer than this; default null: never reap. */
        public Builder idleTtl(Duration idleTtl) {
            if (idleTtl != null && (idleTtl.isNegative() || idleTtl.isZero())) {
                throw new InvalidSpecException("idleTtl (" + idleTtl + ") must be positive");
            }
            this.idleTtl = idleTtl;
            return this;
        }

        /** A nanosecond clock for idle times (tests pass a fake); default {@link System#nanoTime()}. */
        public Builder clock(LongSupplier nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        /**
         * Whether calls on one key run one at a time (default true). With false, calls on one workspace may overlap:
         * the workspace is still created once, and is not reaped while a call runs, but programs of one conversation
         * can then see each other's half-written files.
         */
        public Builder serialCalls(boolean serialCalls) {
            this.serialCalls = serialCalls;
            return this;
        }

        /** Whether a background thread reaps idle workspaces; default true when a TTL is set. */
        public Builder backgroundReaper(boolean start) {
            this.startReaper = start;
            return this;
        }

        public WorkspaceRegistry build() {
            return new WorkspaceRegistry(this);
        }
    }
}
