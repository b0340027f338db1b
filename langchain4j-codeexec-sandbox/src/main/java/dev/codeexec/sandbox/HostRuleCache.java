package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a profile's host rules ({@code /etc/shadow}, {@code ~/.aws}, read grants of host paths) resolve to, kept from
 * one run to the next while the host directories the resolution looked into are unchanged: so that a run looks at a
 * few directories instead of resolving some hundred paths again.
 *
 * <p><b>What is cached.</b> The entries (real path, mount kind, rule) the host and home rules of a profile produce
 * for a list of home directories, as {@link RulePaths#hostPath} computes them; nothing derived from a workspace. The
 * key is the rules (in order) and the home directories; the workspace rules, the protected names, the checks and the
 * pinning are planned for every run as before.
 *
 * <p><b>Rule of validity.</b> Resolving a path looks up one name in each directory on its way (following links the
 * way {@link RulePaths} does). Every directory looked in is recorded with its identity (device, inode) and change time
 * ({@code ctime}), read <em>before</em> the lookup in it. A name created, removed or renamed in a directory (a secret
 * appearing, a link planted or swapped, a directory replaced) changes that directory's ctime, which no program can set;
 * a file system mounted on a directory changes the identity seen at its path; a change of permissions changes the
 * ctime too. So entries are reused only while every recorded directory has the identity and ctime it had: one
 * {@code lstat} per directory (a few dozen for the default profile), else they are resolved again and the new result
 * replaces the old. As for {@link ProtectedNameScanner}, a ctime from a coarse clock step could hide a change made in
 * the same step: a result is kept only when every recorded ctime was older than the resolution by more than a step
 * ({@link ProtectedNameScanner#settled}); otherwise the next run resolves again.
 *
 * <p><b>Not cached</b> (resolved per run as before): profiles with a host or home write grant (a program can change
 * what lies below it, and the rules after it are resolved relative to it), and any resolution that looks inside the
 * sandbox root (the workspaces are there). The engine's own configuration (its profile) fixes the rules; a run's
 * additional grants and read-only stages are part of the key.
 *
 * <p>Thread-safe.
 */
final class HostRuleCache {

    /** Results kept at most (one per distinct set of host rules and homes; a run's extra grants make another). */
    static final int MAX_ENTRIES = 32;

    /** One entry of a resolved rule. */
    record Resolved(String path, Mount.Kind kind, String rule) {
    }

    /** A directory looked in, as it was before the lookup. */
    private record Stamp(String dir, long dev, long ino, long ctime) {
    }

    private record Cached(List<Resolved> entries, List<Stamp> stamps) {
    }

    private final LongSupplier wallClockNanos;
    private final Map<Object, Cached> cache = new LinkedHashMap<>(16, 0.75f, true);
    private long hits;

    /** A cache on the system clock. */
    HostRuleCache() {
        this(HostRuleCache::nowNanos);
    }

    /** A cache with its own clock (nanoseconds since the epoch, the clock of file times): for tests. */
    HostRuleCache(LongSupplier wallClockNanos) {
        this.wallClockNanos = wallClockNanos;
    }

    /**
     * The entries cached for {@code key}, when every directory their resolution looked in is still as it was; else
     * null (and the stale result is dropped).
     */
    List<Resolved> lookup(Object key) {
        Cached c;
        synchronized (cache) {
            c = cache.get(key);
        }
        if (c == null) {
            return null;
        }
        for (Stamp s : c.stamps) {
            Stamp now = stamp(s.dir);
            if (!s.equals(now)) {
                synchronized (cache) {
                    cache.remove(key, c);
                }
                return null;
            }
        }
        synchronized (cache) {
            hits++;
        }
        return c.entries;
    }

    /** Starts recording a resolution: give its recorder to {@link RulePaths#hostPath}, then {@link #store} it. */
    Recorder record() {
        return new Recorder(wallClockNanos.getAsLong());
    }

    /**
     * Keeps {@code entries} for {@code key} when the recorded resolution may be trusted later: it looked nowhere at or
     * below {@code sandboxRoot}, and every directory it looked in was settled.
     */
    void store(Object key, Recorder r, List<Resolved> entries, Path sandboxRoot) {
        String root = sandboxRoot.toString();
        for (Stamp s : r.stamps.values()) {
            if (s == null || LayoutPaths.isAtOrBelow(s.dir, root) || !ProtectedNameScanner.settled(s.ctime, r.start)) {
                return;
            }
        }
        for (Resolved e : entries) {
            if (LayoutPaths.isAtOrBelow(e.path, root)) {
                return;
            }
        }
        synchronized (cache) {
            cache.put(key, new Cached(List.copyOf(entries), List.copyOf(r.stamps.values())));
            while (cache.size() > MAX_ENTRIES) {
                cache.remove(cache.keySet().iterator().next());
            }
        }
    }

    /** Results reused so far (for tests). */
    long hits() {
        synchronized (cache) {
            return hits;
        }
    }

    /** Records the directories one resolution looks in, each as it was before its first lookup. */
    static final class Recorder {
        private final long start;
        /** By path; null where the directory could not be examined (the result is then not kept). */
        private final Map<String, Stamp> stamps = new LinkedHashMap<>();

        private Recorder(long start) {
            this.start = start;
        }

        /** Called before a name is looked up in {@code dir}. */
        void lookingIn(String dir) {
            if (!stamps.containsKey(dir)) {
                stamps.put(dir, stamp(dir));
            }
        }
    }

    /** A directory's identity and ctime now (a link is not followed), or null when it cannot be examined. */
    private static Stamp stamp(String dir) {
        try {
            Map<String, Object> a = Files.readAttributes(Path.of(dir), "unix:ctime,dev,ino", LinkOption.NOFOLLOW_LINKS);
            return new Stamp(dir, (Long) a.get("dev"), (Long) a.get("ino"),
                    ((FileTime) a.get("ctime")).to(TimeUnit.NANOSECONDS));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Entries of {@code entries} as cacheable values, in order. */
    static List<Resolved> of(Map<String, LayoutEntry> entries) {
        List<Resolved> out = new ArrayList<>();
        entries.forEach((p, e) -> out.add(new Resolved(p, e.kind, e.rule)));
        return out;
    }

    private static long nowNanos() {
        java.time.Instant now = java.time.Instant.now();
        return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }
}
