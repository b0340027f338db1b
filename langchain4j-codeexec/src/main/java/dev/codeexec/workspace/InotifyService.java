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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
    /** Guarded by {@code drain}. */
    private WatchKey sentinelKey;
    /** For each key, the watches that use it and the directory it is for each of them. */
    private final Map<WatchKey, Map<HostChangeFeed.HostWatch, String>> owners = new ConcurrentHashMap<>();
    private final Object drain = new Object();
    /** Open watches; guarded by {@code InotifyService.class}. */
    private int users;
    /**
     * Rounds begun: raised before a round creates its sentinel, so that a round numbered above what a caller read
     * on arrival made its sentinel after everything the caller had done by then.
     */
    private final AtomicLong rounds = new AtomicLong();
    /** The last round that saw its sentinel arrive; guarded by {@code drain}. */
    private long completed;

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
     * <p>Concurrent callers share round trips: a round that began after a caller arrived covers that caller too
     * (its sentinel was made after every change the caller made before the call, and the queue is in order), so a
     * caller that finds such a round completed when it gets the drain returns at once. Under many conversations a
     * wave of callers then waits for at most two round trips instead of one each.
     */
    boolean sync() {
        long arrived = rounds.get();
        synchronized (drain) {
            if (completed > arrived) {
                return true;
            }
            long round = rounds.incrementAndGet();
            if (!roundTrip("t" + round)) {
                return false;
            }
            completed = round;
            return true;
        }
    }

    /** Round trips made so far (for tests). */
    long roundTrips() {
        return rounds.get();
    }

    /** One round: makes the sentinel {@code token} and hands over every notice up to its own. Holds {@code drain}. */
    private boolean roundTrip(String token) {
        Path file = sentinelDir.resolve(token);
        try {
            Files.createFile(file);
            Files.delete(file);
        } catch (IOException e) {
            // The private directory was removed (a cleaner of the temporary directory): make it again.
            try {
                Files.createDirectories(sentinelDir);
                sentinelKey = sentinelDir.register(watcher, ENTRY_CREATE);
                Files.createFile(file);
                Files.delete(file);
            } catch (IOException again) {
                return false;
            }
        }
        long deadline = System.nanoTime() + HostChangeFeed.SYNC_TIMEOUT.toNanos();
        boolean seen = false;
        try {
            while (!seen) {
                long left = deadline - System.nanoTime();
                WatchKey k = left <= 0 ? null : watcher.poll(left, TimeUnit.NANOSECONDS);
                if (k == null) {
                    return false;
                }
                seen = handle(k, token);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        // A key reset during the loop is queued again behind the sentinel's: take those too.
        for (WatchKey k = watcher.poll(); k != null; k = watcher.poll()) {
            handle(k, token);
        }
        return true;
    }

    /** Hands a key's notices to its owners; true when it carried the sentinel {@code token}. */
    private boolean handle(WatchKey k, String token) {
        List<WatchEvent<?>> events = k.pollEvents();
        boolean valid = k.reset();
        if (k == sentinelKey) {
            boolean seen = false;
            for (WatchEvent<?> e : events) {
                if (e.kind() == OVERFLOW) {
                    // The instance's queue overflowed: every watch lost track, and the token may be lost too.
                    owners.values().forEach(m -> m.keySet().forEach(HostChangeFeed.HostWatch::lostTrack));
                    seen = true;
                } else if (token.equals(String.valueOf(e.context()))) {
                    seen = true;
                }
            }
            return seen;
        }
        Map<HostChangeFeed.HostWatch, String> m = owners.get(k);
        if (m != null) {
            m.forEach((w, rel) -> w.offer(rel, events, valid));
        }
        return false;
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
