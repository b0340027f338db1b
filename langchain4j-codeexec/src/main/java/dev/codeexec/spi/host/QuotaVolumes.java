package dev.codeexec.spi.host;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volumes that bound what a workspace can hold: each an ext4 file system of its own in a sparse image file,
 * loop-mounted ({@code nosuid,nodev}) in one directory of the engine's state. A program that fills one gets "No space
 * left on device" there; the host's file system, the engine's state and every other volume keep their room.
 *
 * <p>Each file system reserves blocks ({@link #reserveFor}) for root, and for one group where the engine names one:
 * programs never get them, the engine's own bookkeeping does, so a full volume never wedges the engine. Writes the
 * engine makes for the model must not use that reserve ({@link dev.codeexec.workspace.WorkspaceSpace#requireRoom}).
 *
 * <p>Needs root (only root can set up loop devices), {@code mkfs.ext4}, {@code tune2fs} and {@code dumpe2fs}
 * (e2fsprogs) and {@code mount}; {@link #probe} tries a volume before an engine relies on it. Mounts live in the
 * host's mount namespace: {@link #release} (on cleanup and close) unmounts them; those of an engine that died without
 * closing are unmounted by the next engine that starts on this host ({@link #reapOrphans}), which sees that no
 * process holds the dead engine's lock any more.
 *
 * <p>Thread-safe: each call works on its own volume's image and mount point.
 */
public final class QuotaVolumes implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(QuotaVolumes.class);

    /** The quota of a workspace whose policy sets none: {@value} bytes. */
    public static final long DEFAULT_QUOTA = 1L << 30;

    /** The smallest quota: {@value} bytes (smaller ext4 file systems have no room for their own metadata). */
    public static final long MIN_QUOTA = 1L << 20;

    /** The name of every directory of volumes; the reaper looks only at images in one. */
    private static final String DIRECTORY_NAME = "volumes";
    private static final String LOCK = ".lock";
    private static final String IMAGE_SUFFIX = ".img";
    private static final String MOUNT_SUFFIX = ".mnt";
    /** What the kernel appends to the backing file of a loop device whose file was deleted. */
    private static final String DELETED = " (deleted)";
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> SEARCH_ONLY = PosixFilePermissions.fromString("rwx--x--x");
    private static final List<String> SBIN = List.of("/usr/sbin/", "/sbin/");
    private static final List<String> BIN = List.of("/usr/bin/", "/bin/");

    /** The host tools a volume needs: e2fsprogs and util-linux. */
    private record Tools(String mkfs, String tune2fs, String dumpe2fs, String mount, String umount) {
        static Tools locate() {
            Tools t = new Tools(first(SBIN, "mkfs.ext4"), first(SBIN, "tune2fs"), first(SBIN, "dumpe2fs"),
                    first(BIN, "mount"), first(BIN, "umount"));
            if (t.mkfs == null || t.tune2fs == null || t.dumpe2fs == null || t.mount == null || t.umount == null) {
                throw new CodeExecException("a volume per workspace needs e2fsprogs (mkfs.ext4, tune2fs, dumpe2fs) "
                        + "and util-linux (mount, umount)");
            }
            return t;
        }
    }

    private final Path dir;
    private final long defaultQuota;
    private final int reserveGroup;
    /** The volumes' mount options: {@code noexec} too where nothing written may be executed. */
    private final String options;
    private final Tools tools;
    private final FileChannel lockChannel;
    private final FileLock lock;
    /**
     * The lock files the engines of this JVM hold. A POSIX record lock belongs to the process and goes when it closes
     * <em>any</em> descriptor of the file: the orphan check must never open a lock file of this JVM's, or another
     * JVM's check would then find that engine's volumes orphaned and unmount them under it.
     */
    private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

    private QuotaVolumes(Path dir, long defaultQuota, int reserveGroup, boolean noexec, Tools tools)
            throws IOException {
        this.options = noexec ? "loop,nosuid,nodev,noexec" : "loop,nosuid,nodev";
        this.dir = dir;
        this.defaultQuota = defaultQuota;
        this.reserveGroup = reserveGroup;
        this.tools = tools;
        this.lockChannel = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        this.lock = lockChannel.lock();
        HELD.add(heldKey(dir.resolve(LOCK)));
    }

    /** How {@link #HELD} names a lock file: its real path where it has one. */
    private static Path heldKey(Path lockFile) {
        try {
            return lockFile.toRealPath();
        } catch (IOException e) {
            return lockFile.toAbsolutePath().normalize();
        }
    }

    /**
     * The volumes of an engine, tried once with a small volume. Unmounts the volumes of dead engines first.
     *
     * @param stateDir     the engine's state directory; the volumes go to its directory {@code volumes}
     * @param defaultQuota the quota of a volume whose caller names none
     * @param reserveGroup a group whose processes may use the reserved blocks besides root, or -1 for none
     * @param noexec       whether nothing on the volumes may be executed (or mapped executable)
     * @throws CodeExecException with the reason when this host cannot set up volumes
     */
    public static QuotaVolumes probe(Path stateDir, long defaultQuota, int reserveGroup, boolean noexec) {
        validate(defaultQuota);
        if (!isRoot()) {
            throw new CodeExecException("a volume per workspace needs root (loop devices)");
        }
        Tools tools = Tools.locate();
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            throw new CodeExecException("a volume per workspace needs loop devices (/dev/loop-control)");
        }
        reapOrphans();
        QuotaVolumes v;
        try {
            Path d = Files.createDirectories(stateDir.resolve(DIRECTORY_NAME));
            Files.setPosixFilePermissions(d, SEARCH_ONLY);
            v = new QuotaVolumes(d.toRealPath(), defaultQuota, reserveGroup, noexec, tools);
        } catch (IOException e) {
            throw new CodeExecException("cannot create the directory of the workspace volumes: " + e.getMessage(), e);
        }
        String trial = "probe-" + ProcessHandle.current().pid();
        try {
            v.mount(trial, MIN_QUOTA);
            v.release(trial);
        } catch (RuntimeException e) {
            v.close();
            throw new CodeExecException("a trial volume could not be set up: " + e.getMessage(), e);
        }
        return v;
    }

    /**
     * The volumes an engine builds with, or null for none: the one rule for a disk quota by default.
     *
     * @param engine    the engine's name, for messages ({@code SandboxEngine})
     * @param requested the builder's quota: null for {@link #DEFAULT_QUOTA} where this host can enforce it (a warning
     *                  where it cannot), 0 for none, otherwise that quota or a failure
     * @param open      opens the volumes with the default quota given, or throws {@link CodeExecException} saying why
     *                  it cannot here
     * @param remedy    what an operator can do where it cannot, for the failure's message
     * @param docs      where the docs explain it, for the warning
     * @throws UnsupportedCapabilityException when a quota was requested and this host cannot enforce it
     */
    public static <V> V forEngine(String engine, Long requested, LongFunction<V> open, String remedy, String docs) {
        if (requested != null && requested == 0) {
            return null;
        }
        long quota = requested == null ? DEFAULT_QUOTA : requested;
        validate(quota);
        try {
            return open.apply(quota);
        } catch (CodeExecException e) {
            if (requested != null) {
                throw new UnsupportedCapabilityException(engine + " cannot enforce a disk quota per workspace here: "
                        + e.getMessage() + ". " + remedy + ", or build it with diskQuota(0) to go without one");
            }
            LOG.warn("{} has no disk quota per workspace here ({}): a program can fill the disk its workspaces are on. "
                    + "See {}", engine, e.getMessage(), docs);
            return null;
        }
    }

    /** Whether this process runs as root: {@code /proc/self} belongs to the effective user. */
    private static boolean isRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** @throws InvalidSpecException for a quota below {@link #MIN_QUOTA} */
    public static void validate(long quota) {
        if (quota < MIN_QUOTA) {
            throw new InvalidSpecException("a workspace's disk quota (" + quota + " bytes) must be at least "
                    + MIN_QUOTA + " bytes");
        }
    }

    /**
     * Creates a volume: a sparse image, formatted, its blocks reserved so that what programs may write is the quota,
     * mounted on {@link #mountPoint}, whose root (mode 0711, root's) is returned. The image is made larger than quota
     * and reserve by a generous estimate of ext4's own metadata; whatever the estimate leaves over goes to the reserve.
     * It takes disk space only as files are written. On failure nothing of it is left.
     *
     * @param name     the volume's name, unique in this engine (a workspace's or container's)
     * @param maxBytes its quota; 0 for the default
     * @throws BackendUnavailableException when it cannot be set up
     */
    public Path mount(String name, long maxBytes) {
        long quota = maxBytes > 0 ? maxBytes : defaultQuota;
        validate(quota);
        long base = quota + reserveFor(quota);
        long size = base + base / 16 + Math.min(base / 25, 16L << 20) + (512L << 10);
        Path image = imageOf(name);
        Path mountPoint = mountPoint(name);
        try {
            try (FileChannel ch = FileChannel.open(image, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE))) {
                ch.write(ByteBuffer.wrap(new byte[1]), size - 1); // sparse: disk space is taken as files are written
            }
            run(tools.mkfs, "-q", "-F", "-O", "^has_journal", "-m", "0", "-E", "nodiscard", image.toString());
            List<String> tune = new ArrayList<>(List.of(tools.tune2fs, "-r",
                    Long.toString(reservedBlocks(image, quota))));
            if (reserveGroup >= 0) {
                tune.addAll(List.of("-g", Integer.toString(reserveGroup)));
            }
            tune.add(image.toString());
            run(tune.toArray(String[]::new));
            Files.createDirectory(mountPoint);
            // Private: the mount and its removal never propagate into namespaces copied from this one meanwhile (a
            // sandbox being set up), where a mount vanishing mid-setup fails bubblewrap.
            run(tools.mount, "--make-private", "-t", "ext4", "-o", options, image.toString(), mountPoint.toString());
            Files.deleteIfExists(mountPoint.resolve("lost+found"));
            Files.setPosixFilePermissions(mountPoint, SEARCH_ONLY);
            return mountPoint;
        } catch (IOException | RuntimeException e) {
            release(name);
            throw new BackendUnavailableException("could not set up the workspace's volume (" + e.getMessage() + ")",
                    e);
        }
    }

    /** Where the volume of {@code name} is mounted (whether it exists or not). */
    public Path mountPoint(String name) {
        return dir.resolve(name + MOUNT_SUFFIX);
    }

    /** Whether a volume of that name is mounted now. */
    public boolean holds(String name) {
        return Files.exists(imageOf(name), LinkOption.NOFOLLOW_LINKS) && isMountPoint(mountPoint(name));
    }

    /**
     * Unmounts a volume and deletes it with every file in it; a volume that does not exist is fine. Binds of its
     * directories elsewhere must be unmounted first ({@link #unmount}).
     *
     * @throws CodeExecException when it cannot be unmounted
     */
    public void release(String name) {
        Path mountPoint = mountPoint(name);
        unmount(mountPoint);
        try {
            Files.deleteIfExists(mountPoint);
            Files.deleteIfExists(imageOf(name));
        } catch (IOException e) {
            LOG.warn("could not delete a workspace's volume: {}", e.toString());
        }
    }

    /** Binds {@code source} (a directory of a volume) on {@code target}. */
    public void bind(Path source, Path target) {
        run(tools.mount, "--make-private", "--bind", source.toString(), target.toString());
    }

    /**
     * Unmounts what is mounted on {@code dir}, lazily when it is still in use (a process that outlived its run holds a
     * file: the kernel frees the file system when the last user is gone); nothing when nothing is.
     */
    public void unmount(Path mountPoint) {
        unmount(tools, mountPoint);
    }

    private static void unmount(Tools tools, Path mountPoint) {
        if (!isMountPoint(mountPoint)) {
            return;
        }
        try {
            run(tools.umount, mountPoint.toString());
        } catch (RuntimeException e) {
            try {
                run(tools.umount, "-l", mountPoint.toString());
            } catch (RuntimeException e2) {
                e2.addSuppressed(e);
                throw new CodeExecException("could not unmount a workspace's volume: " + e2.getMessage(), e2);
            }
        }
    }

    /** Releases the engine's lock; every volume must be released first. */
    @Override
    public void close() {
        HELD.remove(heldKey(dir.resolve(LOCK)));
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException ignored) {
            // The lock goes with the channel.
        }
    }

    /**
     * The blocks only root (and the reserve group) may use at least: 5% of the quota, at least 8 MiB (the run folders
     * and saved output of a few runs) or half the quota when that is smaller, at most 256 MiB.
     */
    public static long reserveFor(long quota) {
        return Math.min(256L << 20, Math.max(quota / 20, Math.min(8L << 20, quota / 2)));
    }

    /**
     * The blocks to reserve so that programs may write {@code quota} bytes: the free blocks of the new file system,
     * less the clusters ext4 keeps back for itself (2% of the blocks, at most 4096), less the quota's blocks.
     */
    private long reservedBlocks(Path image, long quota) {
        String header = output(tools.dumpe2fs, "-h", image.toString());
        long blockSize = field(header, "Block size");
        long blocks = field(header, "Block count");
        long free = field(header, "Free blocks");
        long reserved = free - Math.min(blocks / 50, 4096) - (quota + blockSize - 1) / blockSize;
        if (reserved < 0 || reserved > blocks / 2) { // tune2fs reserves at most half
            throw new CodeExecException("the volume's " + free + " free blocks of " + blockSize + " bytes do not fit "
                    + "a quota of " + quota + " bytes and a reserve");
        }
        return reserved;
    }

    private static long field(String dumpe2fsHeader, String name) {
        for (String line : dumpe2fsHeader.split("\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).strip());
            }
        }
        throw new CodeExecException("dumpe2fs printed no '" + name + "'");
    }

    private Path imageOf(String name) {
        return dir.resolve(name + IMAGE_SUFFIX);
    }

    /**
     * Unmounts the volumes of engines that ended without closing: loop-mounted file systems (and their binds) whose
     * image lies in a directory of volumes whose lock no process holds. Best effort; logs what it did.
     */
    public static void reapOrphans() {
        List<String> lines;
        Tools tools;
        try {
            lines = Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8);
            tools = Tools.locate();
        } catch (IOException | RuntimeException e) {
            return;
        }
        for (String line : lines) {
            String[] halves = line.split(" - ", 2);
            String[] f = halves[0].split(" ");
            String[] tail = halves.length == 2 ? halves[1].split(" ") : new String[0];
            if (f.length < 5 || tail.length < 2 || !tail[0].equals("ext4") || !tail[1].startsWith("/dev/loop")) {
                continue;
            }
            String backing = backingFile(tail[1]);
            if (backing == null) {
                continue;
            }
            boolean deleted = backing.endsWith(DELETED);
            Path image = Path.of(deleted ? backing.substring(0, backing.length() - DELETED.length()) : backing);
            Path images = image.getParent();
            if (!image.getFileName().toString().endsWith(IMAGE_SUFFIX) || images == null
                    || !images.getFileName().toString().equals(DIRECTORY_NAME)
                    || !isOrphaned(images.resolve(LOCK), deleted)) {
                continue;
            }
            String mountPoint = unescape(f[4]);
            try {
                run(tools.umount, "-l", mountPoint);
                Files.deleteIfExists(image);
                LOG.info("unmounted the workspace volume of an engine that ended without closing: {}", mountPoint);
            } catch (IOException | RuntimeException e) {
                LOG.warn("could not unmount an orphaned workspace volume at {}: {}", mountPoint, e.getMessage());
            }
        }
    }

    /** The image behind a loop device, ending in {@value #DELETED} when it was deleted; null when none. */
    private static String backingFile(String device) {
        Path f = Path.of("/sys/block", Path.of(device).getFileName().toString(), "loop", "backing_file");
        try {
            String s = Files.readString(f, StandardCharsets.UTF_8).strip();
            return s.startsWith("/") ? s : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Whether the engine of a directory of volumes is gone: no process holds its lock, or (for an image that was
     * deleted, which no engine would still use) the lock file itself was deleted with the engine's files.
     */
    private static boolean isOrphaned(Path lockFile, boolean imageDeleted) {
        if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS)) {
            return imageDeleted;
        }
        if (HELD.contains(heldKey(lockFile))) {
            return false; // held by an engine of this JVM: opening it would drop that engine's lock (see HELD)
        }
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
            FileLock l = ch.tryLock();
            if (l == null) {
                return false;
            }
            l.release();
            return true;
        } catch (OverlappingFileLockException e) {
            return false; // held by an engine of this JVM
        } catch (IOException e) {
            return false;
        }
    }

    /** Mount points in mountinfo escape space, tab, newline and backslash as octal. */
    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length()) {
                sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private static boolean isMountPoint(Path dir) {
        try {
            Object dev = Files.getAttribute(dir, "unix:dev", LinkOption.NOFOLLOW_LINKS);
            Object parentDev = Files.getAttribute(dir.getParent(), "unix:dev", LinkOption.NOFOLLOW_LINKS);
            return !dev.equals(parentDev);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static String first(List<String> dirs, String name) {
        for (String d : dirs) {
            if (Files.isExecutable(Path.of(d + name))) {
                return d + name;
            }
        }
        return null;
    }

    private static void run(String... argv) {
        output(argv);
    }

    /** Runs a host tool, waits for it and returns what it printed; its output becomes the message of a failure. */
    private static String output(String... argv) {
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
            // Nothing of the JVM's environment: the tools' output is parsed (dumpe2fs) and quoted in messages, so it
            // must be in the C locale whatever the host's LANG.
            pb.environment().clear();
            pb.environment().putAll(Map.of("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL", "C"));
            Process p = pb.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new CodeExecException(Path.of(argv[0]).getFileName() + " did not end within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new CodeExecException(Path.of(argv[0]).getFileName() + " failed (exit " + p.exitValue() + "): "
                        + new String(out, StandardCharsets.UTF_8).strip());
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new CodeExecException("could not start " + argv[0] + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while running " + argv[0], e);
        }
    }
}
