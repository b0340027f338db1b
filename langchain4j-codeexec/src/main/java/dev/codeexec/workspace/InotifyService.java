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
     * Sentinels numbered so far. A number is taken before its sentinel is made, so a sentinel numbered at or above
     * a caller's own was made after everything that caller had done before it took its number.
     */
    private final AtomicLong sentinels = new AtomicLong();
    /** The highest sentinel number that arrived (or that an overflow made moot); guarded by {@code drain}. */
    private long arrived;
    /** Syncs that had to wait on the watch service for a sentinel (for tests); guarded by {@code drain}. */
    private long waits;

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
     * <p>Each call makes a sentinel of its own with a fresh number, outside the drain, so that the sentinels of
     * concurrent calls travel through the queue together; one caller at a time drains, handing over the notices of
     * every watch and noting the highest sentinel number that arrived. A call returns once a sentinel numbered at or
     * above its own arrived (that sentinel was made after the call's changes, and the queue is in order), so under
     * many conversations a wave of callers waits for one round trip, not one each in turn.
     */
    boolean sync() {
        long mine = sentinels.incrementAndGet();
        String token = "t" + mine;
        boolean made = makeSentinel(token);
        synchronized (drain) {
            if (!made && !remakeSentinel(token)) {
                return false;
            }
            if (arrived >= mine) {
                return true;
            }
            waits++;
            long deadline = System.nanoTime() + HostChangeFeed.SYNC_TIMEOUT.toNanos();
            try {
                while (arrived < mine) {
                    long left = deadline - System.nanoTime();
                    WatchKey k = left <= 0 ? null : watcher.poll(left, TimeUnit.NANOSECONDS);
                    if (k == null) {
                        return false;
                    }
                    handle(k);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            // A key reset during the loop is queued again behind the sentinel's: take those too.
            for (WatchKey k = watcher.poll(); k != null; k = watcher.poll()) {
                handle(k);
            }
            return true;
        }
    }

    /** Syncs so far that waited on the watch service for a sentinel (for tests). */
    long waits() {
        synchronized (drain) {
            return waits;
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

    /** Hands a key's notices to its owners, and notes the sentinels that arrived. Holds {@code drain}. */
    private void handle(WatchKey k) {
        List<WatchEvent<?>> events = k.pollEvents();
        boolean valid = k.reset();
        if (k == sentinelKey) {
            for (WatchEvent<?> e : events) {
                if (e.kind() == OVERFLOW) {
                    // The instance's queue overflowed: every watch lost track, and sentinels may be lost too. Every
                    // caller numbered so far is answered by the lost track, which its watch's next poll sees.
                    long issued = sentinels.get();
                    owners.values().forEach(m -> m.keySet().forEach(HostChangeFeed.HostWatch::lostTrack));
                    arrived = Math.max(arrived, issued);
                } else {
                    arrived = Math.max(arrived, number(String.valueOf(e.context())));
                }
            }
            return;
        }
        Map<HostChangeFeed.HostWatch, String> m = owners.get(k);
        if (m != null) {
            m.forEach((w, rel) -> w.offer(rel, events, valid));
        }
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
