package dev.codeexec.sandbox;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Finds every entry with a protected name ({@code .git}, ...) in a writable tree, at any depth, without following a
 * symbolic link and without listing again what has not changed since the last run.
 *
 * <p><b>Why not a plain walk.</b> A walk lists every entry on every run: about 3.5 µs per entry here, 0.35 s for
 * a workspace with 100,000 files, on every run. Instead, each directory's listing is remembered with the directory's
 * <em>change time</em> ({@code ctime}) and identity: adding, removing or renaming an entry in a directory changes its
 * ctime, and no program can set a ctime (it is the kernel's clock at the change; {@code utimensat} sets only the
 * access and modification times, and updates the ctime to now). So a directory whose ctime and identity are what they
 * were when it was listed still has the same entries, and a run costs one {@code lstat} per directory (2.5–6 µs here:
 * 25–65 ms for those 100,000 files in 10,000 directories) plus a listing of each directory that changed.
 *
 * <p><b>Coarse clocks.</b> File times come from a clock that advances in steps (a scheduler tick, up to 10 ms; a whole
 * second on file systems without sub-second times); a directory changed in the same step as its listing would keep
 * the ctime the listing recorded. A listing is therefore trusted only when the directory's ctime was older than the
 * scan that made it by more than a step: {@link #SETTLE_NANOS}, or {@link #COARSE_SETTLE_NANOS} when the ctime has no
 * sub-second part (a file system with whole-second times, or by chance). Any change after the scan looked at the
 * directory then gets a later ctime, seen by the next scan; a directory changed more recently is listed again. The ctime is read before the listing, so a change during the listing
 * (by a host process, or a concurrent run sharing a write grant) is seen again next time too.
 *
 * <p><b>Bounds, fail closed.</b> A scan visits at most {@link #MAX_DIRECTORIES} directories and lists at most
 * {@link #MAX_ENTRIES} entries; a tree bigger than that is refused ({@link PolicyViolationException}) rather than half
 * protected. What is remembered is one small node per directory: released with {@link #forget} (a workspace that is
 * cleaned up), and at most {@link #MAX_REMEMBERED} over all roots (the least recently scanned roots are forgotten
 * first, and listed in full when scanned again).
 *
 * <p>Thread-safe: scans of one root are serialised; scans of different roots run in parallel.
 */
final class ProtectedNameScanner {

    /** Most directories one scan visits; a bigger writable tree is refused. */
    static final int MAX_DIRECTORIES = 100_000;

    /** Most directory entries one scan lists (a new tree of this size is listed once, then only what changes). */
    static final int MAX_ENTRIES = 1_000_000;

    /**
     * How much older than the scan a directory's ctime must be for its listing to be trusted later: 100 ms, ten
     * times the coarsest scheduler tick that file times advance by.
     */
    static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** The same for a ctime without a sub-second part, which may come from a clock of whole seconds: 2 s. */
    static final long COARSE_SETTLE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** Roots remembered at most (workspaces are forgotten when they close; grants of runs come and go). */
    static final int MAX_ROOTS = 1024;

    /**
     * Directories remembered at most over all roots (about 140 bytes each, so some 35 MB); beyond, the least recently
     * scanned roots are forgotten, and listed again when next scanned.
     */
    static final long MAX_REMEMBERED = 250_000;

    private static final int S_IFMT = 0170000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFLNK = 0120000;

    /** What a found entry is; a link is never followed, so it is reported as a link. */
    enum Type { DIRECTORY, FILE, LINK, OTHER }

    /** An entry with a protected name: its host path and what it is. */
    record Found(String path, Type type) {
    }

    /**
     * One remembered directory: its identity and ctime when listed, and what the listing held. Kept small (about
     * 140 bytes with its name, measured), since a tree of 10,000 directories keeps 10,000 of them.
     */
    private static final class Node {
        final long dev;
        final long ino;
        final long ctime;
        final boolean settled;
        /** Names of the subdirectories, sorted (other entries are not kept). */
        final String[] names;
        /** Their nodes, in the same order; null where not (or no longer) remembered. */
        final Node[] children;
        /** Entries with a protected name. */
        final String[] hits;

        Node(long dev, long ino, long ctime, boolean settled, String[] names, Node[] children, String[] hits) {
            this.dev = dev;
            this.ino = ino;
            this.ctime = ctime;
            this.settled = settled;
            this.names = names;
            this.children = children;
            this.hits = hits;
        }

        Node child(String name) {
            int i = Arrays.binarySearch(names, name);
            return i < 0 ? null : children[i];
        }
    }

    private static final String[] NO_NAMES = {};
    private static final Node[] NO_NODES = {};

    /** The remembered tree of one root, and the names it was listed for. */
    private static final class RootState {
        List<String> names;
        Node node;
        /** Directories remembered (guarded by {@link #roots}). */
        int remembered;
        int listedLastScan;
    }

    private final LongSupplier wallClockNanos;
    private final int maxDirectories;
    private final long maxEntries;
    private final long maxRemembered;

    /** Roots by path, least recently scanned first; guarded by itself. */
    private final LinkedHashMap<String, RootState> roots = new LinkedHashMap<>(16, 0.75f, true);
    /** Directories remembered over all roots; guarded by {@link #roots}. */
    private long remembered;

    /** A scanner with the documented bounds, on the system clock. */
    ProtectedNameScanner() {
        this(ProtectedNameScanner::nowNanos, MAX_DIRECTORIES, MAX_ENTRIES, MAX_REMEMBERED);
    }

    /** A scanner with its own clock and scan bounds (for tests). */
    ProtectedNameScanner(LongSupplier wallClockNanos, int maxDirectories, long maxEntries) {
        this(wallClockNanos, maxDirectories, maxEntries, MAX_REMEMBERED);
    }

    /**
     * A scanner with its own clock (nanoseconds since the epoch: the clock file times are compared with) and bounds:
     * for tests.
     */
    ProtectedNameScanner(LongSupplier wallClockNanos, int maxDirectories, long maxEntries, long maxRemembered) {
        this.wallClockNanos = wallClockNanos;
        this.maxDirectories = maxDirectories;
        this.maxEntries = maxEntries;
        this.maxRemembered = maxRemembered;
    }

    /**
     * Every entry named one of {@code names} in the tree of {@code root} (the root's own entries included), in no
     * particular order. Directories with a protected name are reported, not entered; {@code skip} names directories
     * (host paths) not to enter either: what the caller already hides, protects, makes read-only or scans as a root
     * of its own.
     *
     * @throws PolicyViolationException when the tree exceeds {@link #MAX_DIRECTORIES} or {@link #MAX_ENTRIES}, or
     *                                  cannot be read
     */
    List<Found> find(Path root, List<String> names, Predicate<String> skip) {
        String key = root.toString();
        RootState state;
        synchronized (roots) {
            state = roots.computeIfAbsent(key, k -> new RootState());
        }
        synchronized (state) {
            if (!names.equals(state.names)) {
                state.names = List.copyOf(names);
                state.node = null;
            }
            Scan scan = new Scan(names, skip, wallClockNanos.getAsLong(), maxDirectories, maxEntries);
            try {
                state.node = scan.run(root, state.node);
            } catch (RuntimeException e) {
                state.node = null; // half updated: start afresh next time
                throw e;
            } finally {
                state.listedLastScan = scan.listed;
                account(key, state, state.node == null ? 0 : scan.directories);
            }
            return scan.found;
        }
    }

    /**
     * Records how many directories a root remembers now, and forgets the least recently scanned other roots while
     * more than {@link #MAX_REMEMBERED} are remembered in all (their next scan lists them again).
     */
    private void account(String key, RootState state, int directories) {
        synchronized (roots) {
            if (roots.get(key) != state) {
                return; // forgotten meanwhile: counts for nothing
            }
            remembered += directories - state.remembered;
            state.remembered = directories;
            for (var it = roots.entrySet().iterator(); remembered > maxRemembered && it.hasNext(); ) {
                Map.Entry<String, RootState> eldest = it.next();
                if (eldest.getValue() != state) {
                    remembered -= eldest.getValue().remembered;
                    it.remove();
                }
            }
            while (roots.size() > MAX_ROOTS) {
                var it = roots.entrySet().iterator();
                remembered -= it.next().getValue().remembered;
                it.remove();
            }
        }
    }

    /** Forgets what was remembered for {@code root} and every root below it (a workspace that closed). */
    void forget(Path root) {
        String r = root.toString();
        synchronized (roots) {
            for (var it = roots.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, RootState> e = it.next();
                if (LayoutPaths.isAtOrBelow(e.getKey(), r)) {
                    remembered -= e.getValue().remembered;
                    it.remove();
                }
            }
        }
    }

    /** Number of directories the last scan of {@code root} listed (for tests: the others were remembered). */
    int listedLastScan(Path root) {
        RootState state;
        synchronized (roots) {
            state = roots.get(root.toString());
        }
        if (state == null) {
            return 0;
        }
        synchronized (state) {
            return state.listedLastScan;
        }
    }

    /** Number of directories remembered for {@code root}, or over all roots for null (for tests). */
    long remembered(Path root) {
        synchronized (roots) {
            if (root == null) {
                return remembered;
            }
            RootState state = roots.get(root.toString());
            return state == null ? 0 : state.remembered;
        }
    }

    /** One scan: counts against the bounds and collects what it finds. */
    private static final class Scan {
        final List<String> names;
        final Predicate<String> skip;
        final long now;
        final int maxDirectories;
        final long maxEntries;
        final List<Found> found = new ArrayList<>();
        int directories;
        int listed;
        long entries;

        Scan(List<String> names, Predicate<String> skip, long now, int maxDirectories, long maxEntries) {
            this.names = names;
            this.skip = skip;
            this.now = now;
            this.maxDirectories = maxDirectories;
            this.maxEntries = maxEntries;
        }

        /** The root's new node, or null when the root is not (or no longer) a directory. */
        Node run(Path root, Node cached) {
            Node top = visit(root, cached);
            if (top == null) {
                return null;
            }
            // Depth first with an explicit stack: trees can be deeper than a thread's stack.
            Deque<Object[]> todo = new ArrayDeque<>();
            todo.push(new Object[] {root, top});
            while (!todo.isEmpty()) {
                Object[] item = todo.pop();
                Path dir = (Path) item[0];
                Node node = (Node) item[1];
                for (String hit : node.hits) {
                    Path p = dir.resolve(hit);
                    found.add(new Found(p.toString(), type(p)));
                }
                for (int i = 0; i < node.names.length; i++) {
                    Path p = dir.resolve(node.names[i]);
                    // Not entered, and not remembered: if it is entered again later, it is listed again.
                    Node next = skip.test(p.toString()) ? null : visit(p, node.children[i]);
                    node.children[i] = next;
                    if (next != null) {
                        todo.push(new Object[] {p, next});
                    }
                }
            }
            return top;
        }

        /**
         * The node of {@code dir}: {@code cached} when the directory is still the one listed and unchanged since,
         * else a new listing (whose subdirectories keep their own remembered nodes, checked when they are visited).
         * Null when {@code dir} is no directory (gone, a link, a file).
         */
        private Node visit(Path dir, Node cached) {
            Map<String, Object> a = stat(dir);
            if (a == null || (mode(a) & S_IFMT) != S_IFDIR) {
                return null;
            }
            if (++directories > maxDirectories) {
                throw new PolicyViolationException("a writable directory of this run holds more than "
                        + maxDirectories + " directories; refusing to run because the protected metadata "
                        + "(.git and the like) in it cannot all be found and protected; remove some, or grant a "
                        + "smaller directory");
            }
            long dev = (Long) a.get("dev");
            long ino = (Long) a.get("ino");
            long ctime = ((FileTime) a.get("ctime")).to(TimeUnit.NANOSECONDS);
            if (cached != null && cached.settled && cached.ctime == ctime && cached.ino == ino && cached.dev == dev) {
                return cached;
            }
            // ctime before the listing: a change during the listing leaves a newer ctime, seen by the next scan.
            listed++;
            TreeMap<String, Node> dirs = new TreeMap<>();
            List<String> hits = null;
            try (DirectoryStream<Path> list = Files.newDirectoryStream(dir)) {
                for (Path p : list) {
                    if (++entries > maxEntries) {
                        throw new PolicyViolationException("a writable directory of this run holds more than "
                                + maxEntries + " entries that changed since the last run; refusing to run because "
                                + "the protected metadata (.git and the like) in it cannot all be found and "
                                + "protected; remove some, or grant a smaller directory");
                    }
                    String name = p.getFileName().toString();
                    if (names.contains(name)) {
                        if (hits == null) {
                            hits = new ArrayList<>(1);
                        }
                        hits.add(name);
                        continue;
                    }
                    Node known = cached == null ? null : cached.child(name);
                    if (known != null || isDirectory(p)) {
                        dirs.put(name, known); // a directory before: visiting it checks what it is now
                    }
                }
            } catch (java.nio.file.NoSuchFileException e) {
                return null; // removed meanwhile (by a host process): nothing left to protect there
            } catch (IOException | java.nio.file.DirectoryIteratorException e) {
                throw new PolicyViolationException("cannot list a writable directory to find the protected metadata "
                        + "in it (" + e.getClass().getSimpleName() + "); refusing to run");
            }
            String[] subdirs = dirs.isEmpty() ? NO_NAMES : dirs.keySet().toArray(NO_NAMES);
            Node[] children = dirs.isEmpty() ? NO_NODES : dirs.values().toArray(NO_NODES);
            return new Node(dev, ino, ctime, settled(ctime, now), subdirs, children,
                    hits == null ? NO_NAMES : hits.toArray(NO_NAMES));
        }

        private static boolean isDirectory(Path p) {
            Map<String, Object> a = stat(p);
            return a != null && (mode(a) & S_IFMT) == S_IFDIR;
        }

        private static Type type(Path p) {
            Map<String, Object> a = stat(p);
            if (a == null) {
                return Type.OTHER;
            }
            switch (mode(a) & S_IFMT) {
                case S_IFDIR:
                    return Type.DIRECTORY;
                case S_IFREG:
                    return Type.FILE;
                case S_IFLNK:
                    return Type.LINK;
                default:
                    return Type.OTHER;
            }
        }

        private static int mode(Map<String, Object> a) {
            return (Integer) a.get("mode");
        }

        /**
         * A path's own mode, ctime and identity (a link is not followed), or null when it does not exist. Any other
         * failure (a path too long to name, no permission) fails the scan: a directory the scan cannot look at could
         * hold anything.
         */
        private static Map<String, Object> stat(Path p) {
            try {
                return Files.readAttributes(p, "unix:mode,ctime,dev,ino", LinkOption.NOFOLLOW_LINKS);
            } catch (java.nio.file.NoSuchFileException e) {
                return null;
            } catch (IOException e) {
                throw new PolicyViolationException("cannot examine a writable directory to find the protected "
                        + "metadata in it (" + e.getClass().getSimpleName() + "); refusing to run");
            }
        }
    }

    /**
     * True when a listing made at {@code now} of a directory whose ctime is {@code ctime} (both in nanoseconds since
     * the epoch) may be trusted later: see the class comment.
     */
    static boolean settled(long ctime, long now) {
        long step = ctime % 1_000_000_000L == 0 ? COARSE_SETTLE_NANOS : SETTLE_NANOS;
        return ctime < now - step;
    }

    private static long nowNanos() {
        java.time.Instant now = java.time.Instant.now();
        return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }
}
