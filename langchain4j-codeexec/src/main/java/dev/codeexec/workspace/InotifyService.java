package dev.codeexec.workspace;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM's one inotify instance for {@link HostChangeFeed}: its keys, their owners, and the round trip that makes a
 * poll complete (see the feed's class comment for why a poll waits for a notice of its own). Started with the first
 * watch and closed with the last.
 */
final class InotifyService {

    private static final Logger LOG = LoggerFactory.getLogger(HostChangeFeed.class);

    private static InotifyService current;
    private static boolean unusable;

    private final WatchService watcher;
    private final Path sentinelDir;
    /** Replaced under {@code drain}; read by the drainer. */
    private volatile WatchKey sentinelKey;
    /** For each key, the watches that use it and the directory it is for each of them. */
    private final Map<WatchKey, Map<HostChangeFeed.HostWatch, String>> owners = new ConcurrentHashMap<>();
    private final Object drain = new Object();
    /** Open watches; guarded by {@code InotifyService.class}. */
    private int users;
    /**
     * Sentinels numbered so far. A number is taken before its sentinel is made, so a sentinel numbered at or above
     * a caller's own was made after everything that caller had done before it took its number.
     */
    private final AtomicLong sentinels = new AtomicLong();
    /**
     * The highest sentinel number that arrived (or that an overflow made moot), published once every key queued
     * before it was handed over too; written by the drainer only.
     */
    private volatile long arrived;
    /** True while a caller drains the watch service for everyone; guarded by {@code drain}. */
    private boolean draining;
    /**
     * Callers waiting for their sentinel: woken by the drainer once a sentinel at or above theirs arrived, and the
     * first of those still waiting when it stops draining, to drain in its place.
     */
    private final Queue<Waiter> waiting = new ConcurrentLinkedQueue<>();
    /** Syncs that drained the watch service themselves (for tests); guarded by {@code drain}. */
    private long drains;

    private InotifyService(WatchService watcher, Path sentinelDir, WatchKey sentinelKey) {
        this.watcher = watcher;
        this.sentinelDir = sentinelDir;
        this.sentinelKey = sentinelKey;
    }

    /** The shared service with one more user, started if needed; null when this host cannot have one. */
    static synchronized InotifyService acquire() {
        if (unusable) {
            return null;
        }
        if (current == null) {
            current = start();
            if (current == null) {
                unusable = true;
                return null;
            }
        }
        current.users++;
        return current;
    }

    private static InotifyService start() {
        WatchService w = null;
        Path dir = null;
        try {
            w = FileSystems.getDefault().newWatchService();
            if (!w.getClass().getName().equals("sun.nio.fs.LinuxWatchService")) {
                // Any other implementation polls the tree every few seconds: no use for a look that must be
                // complete at once.
                LOG.info("no native file watch service on this JVM: change reports walk the workspace");
                w.close();
                return null;
            }
            dir = Files.createTempDirectory("codeexec-watch-");
            InotifyService s = new InotifyService(w, dir, dir.register(w, ENTRY_CREATE));
            if (!s.sync()) {
                LOG.warn("file change notices do not arrive (is {} on a file system without inotify?): change "
                        + "reports walk the workspace", dir.getParent());
                s.shutdown();
                return null;
            }
            return s;
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot watch files for changes ({}): change reports walk the workspace", e.toString());
            closeQuietly(w);
            deleteQuietly(dir);
            return null;
        }
    }

    void release() {
        synchronized (InotifyService.class) {
            if (--users == 0 && current == this) {
                current = null;
                shutdown();
            }
        }
    }

    private void shutdown() {
        closeQuietly(watcher);
        deleteQuietly(sentinelDir);
    }

    /** Watches {@code dir} for {@code owner} as its directory {@code rel}. */
    WatchKey register(Path dir, HostChangeFeed.HostWatch owner, String rel) throws IOException {
        synchronized (owners) {
            WatchKey k = dir.register(watcher, ENTRY_CREATE, ENTRY_DELETE, ENTRY_MODIFY);
            owners.computeIfAbsent(k, x -> new ConcurrentHashMap<>()).put(owner, rel);
            return k;
        }
    }

    /** Drops {@code owner}'s use of a key; the key is cancelled when nobody uses it any more. */
    void unregister(WatchKey k, HostChangeFeed.HostWatch owner) {
        synchronized (owners) {
            Map<HostChangeFeed.HostWatch, String> m = owners.get(k);
            if (m != null) {
                m.remove(owner);
                if (m.isEmpty()) {
                    owners.remove(k);
                    k.cancel();
                }
            }
        }
    }

    /**
     * Hands every notice queued so far to its watches, and returns once every change made before the call has
     * been handed over; false when that could not be made sure of in time (then nothing can be trusted).
     *
     * <p>Each call makes a sentinel of its own with a fresh number, without a lock, so that the sentinels of
     * concurrent calls travel through the queue together. One caller at a time drains the watch service for all,
     * handing over the notices of every watch, and publishes the highest sentinel number that arrived; a call
     * returns once that is at or above its own number (that sentinel was made after the call's changes, and the
     * queue is in order). The others wait parked, each woken as soon as a sentinel at or above its own arrived (the
     * first still waiting when the drainer stops drains next), so under many conversations a wave of callers waits
     * for about one round trip together, not for one round trip each in turn behind a lock.
     */
    boolean sync() {
        long mine = sentinels.incrementAndGet();
        String token = "t" + mine;
        if (!makeSentinel(token)) {
            synchronized (drain) {
                if (!remakeSentinel(token)) {
                    return false;
                }
            }
        }
        long deadline = System.nanoTime() + HostChangeFeed.SYNC_TIMEOUT.toNanos();
        Waiter me = new Waiter(Thread.currentThread(), mine);
        waiting.add(me);
        try {
            while (arrived < mine) {
                boolean lead;
                synchronized (drain) {
                    lead = !draining;
                    if (lead) {
                        draining = true;
                        drains++;
                    }
                }
                if (lead) {
                    try {
                        return drainUntil(mine, deadline);
                    } finally {
                        waiting.remove(me);
                        synchronized (drain) {
                            draining = false;
                        }
                        wakeNextDrainer();
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || me.thread().isInterrupted()) {
                    // Given up: had this caller been woken to drain next, another must be.
                    waiting.remove(me);
                    wakeNextDrainer();
                    return false;
                }
                LockSupport.parkNanos(this, left);
            }
            return true;
        } finally {
            waiting.remove(me);
        }
    }

    /**
     * Drains the watch service until a sentinel numbered at or above {@code mine} arrived; false on time-out or
     * interrupt. Only the one caller that is {@code draining} runs this.
     */
    private boolean drainUntil(long mine, long deadline) {
        try {
            while (arrived < mine) {
                long left = deadline - System.nanoTime();
                WatchKey k = left <= 0 ? null : watcher.poll(left, TimeUnit.NANOSECONDS);
                if (k == null) {
                    return false;
                }
                long seen = handle(k);
                if (seen > arrived) {
                    // A key reset before the sentinel arrived is queued again behind the sentinel's: take those
                    // too, before anyone relies on the sentinel.
                    for (WatchKey more = watcher.poll(); more != null; more = watcher.poll()) {
                        seen = Math.max(seen, handle(more));
                    }
                    arrived = seen;
                    wakeArrived(seen);
                }
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A caller waiting for the sentinel numbered {@code number}. */
    private record Waiter(Thread thread, long number) {
    }

    /** Wakes the callers whose sentinel is covered by one numbered {@code upTo}. */
    private void wakeArrived(long upTo) {
        for (Waiter w : waiting) {
            if (w.number() <= upTo) {
                LockSupport.unpark(w.thread());
            }
        }
    }

    /** Wakes the first caller still waiting for its sentinel, to drain next. */
    private void wakeNextDrainer() {
        long upTo = arrived;
        for (Waiter w : waiting) {
            if (w.number() > upTo) {
                LockSupport.unpark(w.thread());
                return;
            }
        }
    }

    /** Syncs so far that drained the watch service themselves (for tests). */
    long drains() {
        synchronized (drain) {
            return drains;
        }
    }

    /** Syncs so far (for tests). */
    long syncs() {
        return sentinels.get();
    }

    private boolean makeSentinel(String token) {
        Path file = sentinelDir.resolve(token);
        try {
            Files.createFile(file);
            Files.delete(file);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Makes the private directory again (a cleaner of the temporary directory removed it), watches it, and makes
     * the sentinel there. Holds {@code drain}.
     */
    private boolean remakeSentinel(String token) {
        try {
            Files.createDirectories(sentinelDir);
            sentinelKey = sentinelDir.register(watcher, ENTRY_CREATE);
        } catch (IOException e) {
            return false;
        }
        return makeSentinel(token);
    }

    /**
     * Hands a key's notices to its owners; returns the highest sentinel number among them (or {@link #arrived}).
     * Only the drainer runs this.
     */
    private long handle(WatchKey k) {
        List<WatchEvent<?>> events = k.pollEvents();
        boolean valid = k.reset();
        long seen = arrived;
        if (k == sentinelKey) {
            for (WatchEvent<?> e : events) {
                if (e.kind() == OVERFLOW) {
                    // The instance's queue overflowed: every watch lost track, and sentinels may be lost too. Every
                    // caller numbered so far is answered by the lost track, which its watch's next poll sees.
                    long issued = sentinels.get();
                    owners.values().forEach(m -> m.keySet().forEach(HostChangeFeed.HostWatch::lostTrack));
                    seen = Math.max(seen, issued);
                } else {
                    seen = Math.max(seen, number(String.valueOf(e.context())));
                }
            }
            return seen;
        }
        Map<HostChangeFeed.HostWatch, String> m = owners.get(k);
        if (m != null) {
            m.forEach((w, rel) -> w.offer(rel, events, valid));
        }
        return seen;
    }

    /** The number of a sentinel's name, or 0 for a name that is not one. */
    private static long number(String name) {
        if (name.length() < 2 || name.charAt(0) != 't') {
            return 0;
        }
        try {
            return Long.parseLong(name, 1, name.length(), 10);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static void closeQuietly(WatchService w) {
        if (w != null) {
            try {
                w.close();
            } catch (IOException e) {
                // Closing: nothing to recover.
            }
        }
    }

    private static void deleteQuietly(Path dir) {
        if (dir != null) {
            try {
                FileTrees.deleteTree(dir);
            } catch (RuntimeException e) {
                // A temporary directory: the system's cleaning removes it otherwise.
            }
        }
    }
}
