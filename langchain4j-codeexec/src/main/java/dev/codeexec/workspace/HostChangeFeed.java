package dev.codeexec.workspace;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;

import dev.codeexec.engine.Workspace;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.FileVisitor;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ChangeFeed} of host-directory workspaces on Linux: the kernel's inotify, through the JDK's native
 * {@link WatchService}. Every directory below the tracked folders is watched (and the folders' parents, for folders
 * that are removed and made again); a directory created or moved in is watched as soon as its tracker looks, and its
 * tracker reads it whole then, so what was written into it before the watch began is not missed.
 *
 * <p><b>When a look may trust the notices.</b> The kernel queues a notice when the change is made, but the JDK's
 * poller thread moves it into its {@link WatchKey} later. Each poll therefore first creates a file with a fresh name
 * in a private directory watched by the same inotify instance and waits until that file's own notice arrives: the
 * instance's queue is in order, so every change made before the poll has arrived by then. A poll costs that round trip
 * (tens of microseconds) plus what changed.
 *
 * <p><b>Sharing.</b> One watch service (one inotify instance, one JDK poller thread) serves every workspace of the JVM;
 * it is started with the first watch and closed with the last. The kernel gives one watch per directory and
 * instance, so two trackers of one workspace share it: each key remembers its owners and is cancelled with the last.
 * Lock order: a watch's own lock, then {@code owners}; the drain lock is taken only without either.
 *
 * <p><b>Limits.</b> A watch stops (its tracker then walks) when its folders hold more than
 * {@value #MAX_WATCHED_DIRECTORIES} directories, or when the system refuses more watches
 * ({@code fs.inotify.max_user_watches}). A watch whose queue overflowed, or that has more than {@value #MAX_PENDING}
 * notices waiting, has lost track: its tracker reads the folders whole, and the watch starts afresh. Mount points
 * inside a workspace, and files changed through {@code mmap} alone, are not seen by inotify.
 *
 * <p>Off with {@code -Dcodeexec.changeFeed=false}; off where the JDK's watch service is not native (it would poll).
 */
final class HostChangeFeed implements ChangeFeed {

    /** {@value}: most directories one workspace's watch follows; past it the tracker walks instead. */
    static final int MAX_WATCHED_DIRECTORIES = 25_000;

    /** {@value}: most notices a watch keeps between two polls; past it the watch has lost track. */
    static final int MAX_PENDING = 20_000;

    /** How long a poll waits for its own notice before it counts the watch as having lost track. */
    static final Duration SYNC_TIMEOUT = Duration.ofSeconds(10);

    /** System property that switches the feed off ({@code false}). */
    static final String ENABLED_PROPERTY = "codeexec.changeFeed";

    private static final Logger LOG = LoggerFactory.getLogger(HostChangeFeed.class);

    private final Function<Workspace, Path> hostPaths;

    private HostChangeFeed(Function<Workspace, Path> hostPaths) {
        this.hostPaths = hostPaths;
    }

    /** The feed for host directories, or null where there is none (not Linux, or switched off). */
    static HostChangeFeed forHost(Function<Workspace, Path> hostPaths) {
        if (!"Linux".equals(System.getProperty("os.name"))
                || "false".equalsIgnoreCase(System.getProperty(ENABLED_PROPERTY))) {
            return null;
        }
        return new HostChangeFeed(hostPaths);
    }

    @Override
    public Watch watch(Workspace ws, List<String> folders) {
        PathResolver resolver = new PathResolver(hostPaths.apply(ws));
        InotifyService service = InotifyService.acquire();
        if (service == null) {
            return null;
        }
        HostWatch w = new HostWatch(service, resolver, folders);
        boolean started = false;
        try {
            started = w.start();
            return started ? w : null;
        } finally {
            if (!started) {
                w.close(); // gives the service back
            }
        }
    }

    /** One workspace's watch: its keys and the notices waiting for its tracker's next poll. */
    static final class HostWatch implements Watch {

        private enum Kind { CREATED, DELETED, MODIFIED, GONE }

        private record Notice(Kind kind, String path) {
        }

        private final InotifyService service;
        private final PathResolver resolver;
        /** The workspace root, real. */
        private final Path root;
        private final List<String> folders;
        /** Directory (workspace-relative) to its key; guarded by {@code this}. */
        private final TreeMap<String, WatchKey> dirs = new TreeMap<>();
        /** Key to the directory it is for, for this watch; guarded by {@code this}. */
        private final Map<WatchKey, String> keyDirs = new HashMap<>();
        private final Object pendingLock = new Object();
        /** Guarded by {@code pendingLock}. */
        private List<Notice> pending = new ArrayList<>();
        /** Guarded by {@code pendingLock}. */
        private boolean lost;
        private volatile boolean closed;

        HostWatch(InotifyService service, PathResolver resolver, List<String> folders) {
            this.service = service;
            this.resolver = resolver;
            this.root = resolver.root();
            this.folders = List.copyOf(folders);
        }

        /** Watches the folders' trees and their parents; false when that exceeded a limit. */
        synchronized boolean start() {
            try {
                for (String f : folders) {
                    String parent = WorkspaceWalk.parentOf(f);
                    if (!f.equals(".") && !tracked(parent) && isDirectory(parent)) {
                        watchOne(parent);
                    }
                    watchTree(f);
                }
                return true;
            } catch (TooManyDirectories | IOException e) {
                LOG.debug("cannot watch a workspace's folders for changes: {}", e.toString());
                return false;
            }
        }

        @Override
        public Notices poll() {
            if (closed) {
                return null;
            }
            boolean synced = service.sync();
            List<Notice> taken;
            boolean wasLost;
            synchronized (pendingLock) {
                taken = pending;
                pending = new ArrayList<>();
                wasLost = lost || !synced;
                lost = false;
            }
            synchronized (this) {
                try {
                    if (wasLost) {
                        restart();
                        return Notices.lostTrack();
                    }
                    Map<String, Boolean> paths = new LinkedHashMap<>();
                    boolean deletions = false;
                    for (Notice n : taken) {
                        switch (n.kind()) {
                            case GONE -> {
                                forget(n.path(), false);
                                if (folders.contains(n.path())) {
                                    restart(); // a folder itself went: watch whatever is there now
                                    return Notices.lostTrack();
                                }
                            }
                            case DELETED -> {
                                deletions = true;
                                paths.put(n.path(), true);
                                forget(n.path(), true);
                            }
                            case CREATED -> {
                                paths.put(n.path(), true);
                                if (tracked(n.path()) && isDirectory(n.path())) {
                                    watchTree(n.path());
                                }
                            }
                            case MODIFIED -> paths.putIfAbsent(n.path(), false);
                            default -> throw new IllegalStateException(n.kind().name());
                        }
                    }
                    paths.keySet().removeIf(p -> !tracked(p));
                    return new Notices(paths, true, deletions);
                } catch (TooManyDirectories | IOException e) {
                    LOG.debug("stopped watching a workspace's folders for changes: {}", e.toString());
                    close();
                    return null;
                }
            }
        }

        /** Called by the service's drain with a key's notices, for the directory {@code rel} of this watch. */
        void offer(String rel, List<WatchEvent<?>> events, boolean keyValid) {
            synchronized (pendingLock) {
                if (closed || lost) {
                    return;
                }
                for (WatchEvent<?> e : events) {
                    if (e.kind() == OVERFLOW) {
                        lostTrackLocked();
                        return;
                    }
                    String name = String.valueOf(e.context());
                    String path = rel.equals(".") ? name : rel + "/" + name;
                    Kind kind = e.kind() == ENTRY_CREATE ? Kind.CREATED : e.kind() == ENTRY_DELETE ? Kind.DELETED
                            : Kind.MODIFIED;
                    pending.add(new Notice(kind, path));
                }
                if (!keyValid) {
                    pending.add(new Notice(Kind.GONE, rel));
                }
                if (pending.size() > MAX_PENDING) {
                    lostTrackLocked();
                }
            }
        }

        void lostTrack() {
            synchronized (pendingLock) {
                lostTrackLocked();
            }
        }

        private void lostTrackLocked() {
            lost = true;
            pending = new ArrayList<>();
        }

        /** Drops every key and watches the folders as they are now. The caller holds {@code this}. */
        private void restart() throws IOException {
            for (WatchKey k : List.copyOf(keyDirs.keySet())) {
                service.unregister(k, this);
            }
            dirs.clear();
            keyDirs.clear();
            for (String f : folders) {
                String parent = WorkspaceWalk.parentOf(f);
                if (!f.equals(".") && !tracked(parent) && isDirectory(parent)) {
                    watchOne(parent);
                }
                watchTree(f);
            }
        }

        /**
         * Watches a directory and every directory below it. Only real directories inside the workspace: the walk does
         * not follow links, and a tree whose path goes through a link is not watched (its tracker does not list it).
         */
        private void watchTree(String rel) throws IOException {
            Path start = at(rel);
            try {
                if (!isDirectory(rel) || !resolver.resolve(rel).equals(start)) {
                    return;
                }
            } catch (dev.codeexec.engine.InvalidSpecException e) {
                return; // leads outside the workspace
            }
            Files.walkFileTree(start, new FileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    String r = root.relativize(dir).toString();
                    watchOne(r.isEmpty() ? "." : r);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE; // gone or unreadable: a listing does not show it either
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }
            });
        }

        /** Watches one directory. The caller holds {@code this}. */
        private void watchOne(String rel) throws IOException {
            if (dirs.containsKey(rel)) {
                return;
            }
            if (dirs.size() >= MAX_WATCHED_DIRECTORIES) {
                throw new TooManyDirectories();
            }
            WatchKey k;
            try {
                k = service.register(at(rel), this, rel);
            } catch (java.nio.file.NoSuchFileException | java.nio.file.NotDirectoryException
                     | java.nio.file.AccessDeniedException e) {
                return; // gone since it was seen, or unreadable: a listing does not show it either
            }
            String before = keyDirs.put(k, rel);
            if (before != null && !before.equals(rel)) {
                dirs.remove(before); // the same directory, moved: the kernel kept its watch
            }
            dirs.put(rel, k);
        }

        /**
         * Stops watching {@code rel} (and, with {@code below}, the directories below it) for this watch. A key that
         * has meanwhile been taken for another directory (a directory moved, then watched at its new place) stays.
         */
        private void forget(String rel, boolean below) {
            List<String> gone = new ArrayList<>();
            if (dirs.containsKey(rel)) {
                gone.add(rel);
            }
            if (below) {
                gone.addAll(dirs.subMap(rel + "/", rel + "0").keySet());
            }
            for (String d : gone) {
                WatchKey k = dirs.remove(d);
                if (k != null && d.equals(keyDirs.get(k))) {
                    keyDirs.remove(k);
                    service.unregister(k, this);
                }
            }
        }

        private boolean tracked(String path) {
            for (String f : folders) {
                if (f.equals(".") || path.equals(f) || path.startsWith(f + "/")) {
                    return true;
                }
            }
            return false;
        }

        private Path at(String rel) {
            return rel.equals(".") ? root : root.resolve(rel);
        }

        private boolean isDirectory(String rel) {
            return Files.isDirectory(at(rel), LinkOption.NOFOLLOW_LINKS);
        }

        @Override
        public void close() {
            synchronized (pendingLock) {
                if (closed) {
                    return;
                }
                closed = true;
                pending = new ArrayList<>();
            }
            synchronized (this) {
                for (WatchKey k : List.copyOf(keyDirs.keySet())) {
                    service.unregister(k, this);
                }
                dirs.clear();
                keyDirs.clear();
            }
            service.release();
        }
    }

    /** A watch would follow more than {@link #MAX_WATCHED_DIRECTORIES} directories. */
    private static final class TooManyDirectories extends RuntimeException {
        TooManyDirectories() {
            super("more than " + MAX_WATCHED_DIRECTORIES + " directories to watch", null, false, false);
        }
    }
}
