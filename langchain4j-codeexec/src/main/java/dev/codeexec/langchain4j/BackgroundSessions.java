package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.ProgramSession;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Background sessions started by {@code workspace_exec}, addressed by ids this class hands out (never the engine's
 * own ids). A session is visible only to the conversation and engine that started it: any other caller gets "unknown
 * session", exactly as for an id that never existed. Exited sessions are closed once they have been idle for the TTL.
 */
final class BackgroundSessions implements AutoCloseable {

    /** Most sessions one workspace may hold open; protects the host from a model that never kills its sessions. */
    static final int MAX_PER_WORKSPACE = 8;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** One session and the read position of its output. */
    static final class Entry {
        final String id;
        final Engine engine;
        final String key;
        final ProgramSession session;
        long offset;
        volatile long lastUsedNanos;

        Entry(String id, Engine engine, String key, ProgramSession session, long now) {
            this.id = id;
            this.engine = engine;
            this.key = key;
            this.session = session;
            this.lastUsedNanos = now;
        }
    }

    private final Map<String, Entry> sessions = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;
    private final Duration ttl;
    private final Consumer<Entry> onRemoved;

    BackgroundSessions(Duration ttl, LongSupplier nanoClock) {
        this(ttl, nanoClock, e -> { });
    }

    /** @param onRemoved told after a session was let go of and closed (killed, reaped, its conversation closed) */
    BackgroundSessions(Duration ttl, LongSupplier nanoClock, Consumer<Entry> onRemoved) {
        this.ttl = ttl;
        this.nanoClock = nanoClock;
        this.onRemoved = onRemoved;
    }

    int countFor(Engine engine, String key) {
        return (int) sessions.values().stream().filter(e -> e.engine == engine && e.key.equals(key)).count();
    }

    /** Sessions of this engine and conversation whose program still runs. */
    int runningFor(Engine engine, String key) {
        return (int) sessions.values().stream().filter(e -> e.engine == engine && e.key.equals(key)
                && e.session.exitCode().isEmpty()).count();
    }

    /** The ids this class gave the sessions of this engine and conversation with these engine ids, sorted. */
    List<String> idsOf(Engine engine, String key, Collection<String> engineIds) {
        return sessions.values().stream().filter(e -> e.engine == engine && e.key.equals(key)
                && engineIds.contains(e.session.id())).map(e -> e.id).sorted().toList();
    }

    /** The ids of the sessions of this engine and conversation whose program still runs, sorted. */
    List<String> runningIdsFor(Engine engine, String key) {
        return sessions.values().stream().filter(e -> e.engine == engine && e.key.equals(key)
                && e.session.exitCode().isEmpty()).map(e -> e.id).sorted().toList();
    }

    Entry register(Engine engine, String key, ProgramSession session) {
        String id;
        do {
            byte[] b = new byte[4];
            RANDOM.nextBytes(b);
            id = "s_" + HexFormat.of().formatHex(b);
        } while (sessions.containsKey(id));
        Entry e = new Entry(id, engine, key, session, nanoClock.getAsLong());
        sessions.put(id, e);
        return e;
    }

    /** The session if it exists and belongs to this engine and conversation. */
    Optional<Entry> find(Engine engine, String key, String id) {
        Entry e = id == null ? null : sessions.get(id.strip());
        if (e == null || e.engine != engine || !e.key.equals(key)) {
            return Optional.empty();
        }
        e.lastUsedNanos = nanoClock.getAsLong();
        return Optional.of(e);
    }

    void remove(Entry e) {
        if (sessions.remove(e.id, e)) {
            try {
                e.session.close();
            } finally {
                onRemoved.accept(e);
            }
        } else {
            e.session.close();
        }
    }

    /** Closes sessions whose program has exited and that nobody polled for the TTL. */
    void reap() {
        long now = nanoClock.getAsLong();
        for (Entry e : new ArrayList<>(sessions.values())) {
            if (e.session.exitCode().isPresent() && now - e.lastUsedNanos > ttl.toNanos()) {
                remove(e);
            }
        }
    }

    /** Closes the sessions of one conversation (when its workspace goes). */
    void closeFor(String key) {
        for (Entry e : new ArrayList<>(sessions.values())) {
            if (e.key.equals(key)) {
                remove(e);
            }
        }
    }

    @Override
    public void close() {
        List<RuntimeException> failures = new ArrayList<>();
        for (Entry e : new ArrayList<>(sessions.values())) {
            try {
                remove(e);
            } catch (RuntimeException ex) {
                failures.add(ex);
            }
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }
}
