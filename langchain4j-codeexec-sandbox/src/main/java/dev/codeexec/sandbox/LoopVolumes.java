package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.workspace.WorkspaceStorage;
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
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox's disk quota: each workspace is an ext4 file system of its own, in a sparse image file under the
 * engine's state, loop-mounted ({@code nosuid,nodev}; {@code noexec} too for a command allow list) there too. The
 * volume holds the workspace's content
 * ({@code ws}), bound on the workspace's directory, and beside it {@code pins}, where the hard links that pin a run's
 * files are made (see {@link LayoutPinning}): a hard link cannot leave its file system. A program that fills it gets
 * "No space left on device" in its own workspace; the host's file system, the engine's state and every other
 * workspace keep their room.
 *
 * <p>The file system reserves blocks that only root can use ({@link #reserveFor}): programs do not run as root (see
 * {@link SandboxUser}), the engine does, so its own bookkeeping in a full workspace (run folders, saved output) still
 * finds room, and the {@code rm} that frees space still runs. Writes the engine makes for the model never use that
 * reserve ({@link dev.codeexec.workspace.WorkspaceSpace#requireRoom}).
 *
 * <p>Needs root (only root can set up loop devices), {@code mkfs.ext4} and {@code mount}; {@link #probe} tries a
 * volume before the engine relies on it. Mounts live in the host's mount namespace: {@link #detach} (on cleanup and
 * close) unmounts them; those of an engine that died without closing are unmounted by the next engine that starts
 * on this host ({@link #reapOrphans}), which sees that no process holds their engine's lock any more.
 *
 * <p>Thread-safe: each call works on its own workspace's directory and image.
 */
final class LoopVolumes implements WorkspaceStorage {

    private static final Logger LOG = LoggerFactory.getLogger(LoopVolumes.class);

    /** The quota of a workspace whose policy sets none: {@value} bytes. */
    static final long DEFAULT_QUOTA = 1L << 30;

    /** The smallest quota: {@value} bytes (smaller ext4 file systems have no room for their own metadata). */
    static final long MIN_QUOTA = 1L << 20;

    private static final String LOCK = ".lock";
    /** The workspace's directory in its volume. */
    private static final String CONTENT = "ws";
    /** The directory of the runs' pinned file links in a volume. */
    private static final String PINS = "pins";
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> SEARCH_ONLY = PosixFilePermissions.fromString("rwx--x--x");
    private static final String IMAGE_SUFFIX = ".img";
    private static final String MOUNT_SUFFIX = ".mnt";
    /** What the kernel appends to the backing file of a loop device whose file was deleted. */
    private static final String DELETED = " (deleted)";
    private static final List<String> SBIN = List.of("/usr/sbin/", "/sbin/");
    private static final List<String> BIN = List.of("/usr/bin/", "/bin/");

    /** The host tools a volume needs: e2fsprogs and util-linux. */
    private record Tools(String mkfs, String tune2fs, String dumpe2fs, String mount, String umount) {
        static Tools locate() {
            Tools t = new Tools(first(SBIN, "mkfs.ext4"), first(SBIN, "tune2fs"), first(SBIN, "dumpe2fs"),
                    first(BIN, "mount"), first(BIN, "umount"));
            if (t.mkfs == null || t.tune2fs == null || t.dumpe2fs == null || t.mount == null || t.umount == null) {
                throw new CodeExecException("setting up a volume per workspace needs e2fsprogs (mkfs.ext4, tune2fs, "
                        + "dumpe2fs) and util-linux (mount, umount)");
            }
            return t;
        }
    }

    private final Path imagesDir;
    private final long defaultQuota;
    private final Tools tools;
    /** Mount options of a volume: {@code noexec} too where the kernel enforces a command allow list. */
    private final String options;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private LoopVolumes(Path imagesDir, long defaultQuota, Tools tools, boolean noexec) throws IOException {
        this.options = noexec ? "loop,nosuid,nodev,noexec" : "loop,nosuid,nodev";
        this.imagesDir = imagesDir;
        this.defaultQuota = defaultQuota;
        this.tools = tools;
        this.lockChannel = FileChannel.open(imagesDir.resolve(LOCK), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        this.lock = lockChannel.lock();
    }

    /**
     * Volumes for the workspaces of an engine, tried once with a small volume.
     *
     * @param imagesDir    where the images go (the engine's state; created)
     * @param defaultQuota the quota of a workspace whose policy sets none
     * @return the volumes; never null
     * @throws CodeExecException with the reason when this host cannot set up volumes
     */
    static LoopVolumes probe(Path imagesDir, long defaultQuota) {
        return probe(imagesDir, defaultQuota, false);
    }

    /**
     * As {@link #probe(Path, long)}, with volumes mounted {@code noexec} when asked: nothing written to a workspace can
     * be executed, or mapped executable by the dynamic loader (see {@link ExecAllowList}).
     */
    static LoopVolumes probe(Path imagesDir, long defaultQuota, boolean noexec) {
        validate(defaultQuota);
        if (SandboxUser.currentIds()[0] != 0) {
            throw new CodeExecException("setting up a volume per workspace needs root (loop devices)");
        }
        Tools tools = Tools.locate();
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            throw new CodeExecException("setting up a volume per workspace needs loop devices (/dev/loop-control)");
        }
        LoopVolumes v;
        try {
            Files.createDirectories(imagesDir);
            v = new LoopVolumes(imagesDir.toRealPath(), defaultQuota, tools, noexec);
        } catch (IOException e) {
            throw new CodeExecException("cannot create the directory of the workspace volumes: " + e.getMessage(), e);
        }
        Path trial = v.imagesDir.resolve("probe-" + ProcessHandle.current().pid());
        try {
            Files.createDirectories(trial);
            v.attach(trial, MIN_QUOTA);
            v.detach(trial);
        } catch (IOException | RuntimeException e) {
            v.close();
            throw new CodeExecException("a trial volume could not be set up: " + e.getMessage(), e);
        } finally {
            try {
                Files.deleteIfExists(trial);
            } catch (IOException ignored) {
                // An empty directory left in the engine's state.
            }
        }
        return v;
    }

    /**
     * The volumes of a new engine, or null for none.
     *
     * @param requested the builder's quota: null for {@link #DEFAULT_QUOTA} where this host can enforce it (a warning
     *                  where it cannot), 0 for none, otherwise that quota or a failure
     * @param sandboxed whether the engine manages a Linux sandbox (bubblewrap)
     * @throws UnsupportedCapabilityException when a quota was requested and this host cannot enforce it
     */
    static LoopVolumes forEngine(Long requested, boolean sandboxed, Path imagesDir) {
        return forEngine(requested, sandboxed, imagesDir, false);
    }

    /** As {@link #forEngine(Long, boolean, Path)}, the volumes mounted {@code noexec} when asked. */
    static LoopVolumes forEngine(Long requested, boolean sandboxed, Path imagesDir, boolean noexec) {
        if (requested != null && requested == 0) {
            return null;
        }
        long quota = requested == null ? DEFAULT_QUOTA : requested;
        validate(quota);
        try {
            if (!sandboxed) {
                throw new CodeExecException("the engine manages no Linux sandbox with this profile or platform");
            }
            reapOrphans();
            return probe(imagesDir, quota, noexec);
        } catch (CodeExecException e) {
            if (requested != null) {
                throw new UnsupportedCapabilityException("SandboxEngine cannot enforce a disk quota per workspace "
                        + "here: " + e.getMessage() + ". Run the engine as root on Linux, or build it with "
                        + "diskQuota(0) to go without one");
            }
            LOG.warn("SandboxEngine has no disk quota per workspace on this host ({}): a program can fill the file "
                    + "system of the engine's root. See docs/sandbox.md, Disk quota", e.getMessage());
            return null;
        }
    }

    /** @throws InvalidSpecException for a quota below {@link #MIN_QUOTA} */
    static void validate(long quota) {
        if (quota < MIN_QUOTA) {
            throw new InvalidSpecException("a workspace's disk quota (" + quota + " bytes) must be at least "
                    + MIN_QUOTA + " bytes");
        }
    }

    @Override
    public boolean enforcesQuota() {
        return true;
    }

    /**
     * Creates a sparse image, formats it, sets its blocks reserved for root so that what programs may write is the
     * quota, mounts it in the engine's state and binds its directory {@code ws} on {@code dir}. The image is made
     * larger than quota and reserve by a generous estimate of ext4's own metadata; whatever the estimate leaves over
     * goes to the reserve. It takes disk space only as files are written.
     */
    @Override
    public void attach(Path dir, long maxBytes) {
        long quota = maxBytes > 0 ? maxBytes : defaultQuota;
        validate(quota);
        long base = quota + reserveFor(quota);
        long size = base + base / 16 + Math.min(base / 25, 16L << 20) + (512L << 10);
        Path image = imageOf(dir);
        Path volume = volumeOf(dir);
        try {
            try (FileChannel ch = FileChannel.open(image, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE))) {
                ch.write(ByteBuffer.wrap(new byte[1]), size - 1); // sparse: disk space is taken as files are written
            }
            run(tools.mkfs, "-q", "-F", "-O", "^has_journal", "-m", "0", "-E", "nodiscard", image.toString());
            run(tools.tune2fs, "-r", Long.toString(reservedBlocks(image, quota)), image.toString());
            Files.createDirectory(volume);
            run(tools.mount, "-t", "ext4", "-o", options, image.toString(), volume.toString());
            Files.deleteIfExists(volume.resolve("lost+found"));
            Files.createDirectory(volume.resolve(CONTENT));
            Files.createDirectory(volume.resolve(PINS));
            for (Path p : List.of(volume, volume.resolve(PINS))) {
                Files.setPosixFilePermissions(p, SEARCH_ONLY); // bubblewrap, as the sandbox user, reaches pins
            }
            run(tools.mount, "--bind", volume.resolve(CONTENT).toString(), dir.toString());
        } catch (IOException | RuntimeException e) {
            detach(dir);
            throw new BackendUnavailableException("could not set up the workspace's volume (" + e.getMessage() + ")",
                    e);
        }
    }

    /**
     * Where the pinned file links of one run of a workspace go: beside the workspace's content on its volume, reached
     * through the volume's own mount (a hard link cannot cross mounts, even of one file system); null when the
     * workspace has no volume of this engine (a host directory).
     */
    VolumePins pinsOf(Path workspaceRoot, String run) {
        Path volume = volumeOf(workspaceRoot);
        if (!Files.exists(imageOf(workspaceRoot), LinkOption.NOFOLLOW_LINKS) || !isMountPoint(volume)) {
            return null;
        }
        return new VolumePins(workspaceRoot, volume.resolve(CONTENT), volume.resolve(PINS).resolve(run));
    }

    /**
     * The pinning of a run's files inside a workspace on a volume.
     *
     * @param workspace the workspace's root as programs and plans name it (the bind)
     * @param content   the same directory through the volume's own mount
     * @param dir       the run's directory of links on the volume
     */
    record VolumePins(Path workspace, Path content, Path dir) {
        /** The path of a file of the workspace through the volume's mount, where a link to it can be made. */
        Path onVolume(Path file) {
            return content.resolve(workspace.relativize(file));
        }
    }

    @Override
    public void detach(Path dir) {
        unmount(dir);
        Path volume = volumeOf(dir);
        unmount(volume);
        try {
            Files.deleteIfExists(volume);
            Files.deleteIfExists(imageOf(dir));
        } catch (IOException e) {
            LOG.warn("could not delete a workspace's volume: {}", e.toString());
        }
    }

    /** Unmounts what is mounted on {@code dir}, lazily when it is still in use. */
    private void unmount(Path dir) {
        if (!isMountPoint(dir)) {
            return;
        }
        try {
            run(tools.umount, dir.toString());
        } catch (RuntimeException e) {
            // Still in use (a process that outlived its run holds a file): detach it now, the kernel frees the
            // file system when the last user is gone.
            try {
                run(tools.umount, "-l", dir.toString());
            } catch (RuntimeException e2) {
                e2.addSuppressed(e);
                throw new CodeExecException("could not unmount a workspace's volume: " + e2.getMessage(), e2);
            }
        }
    }

    /**
     * The blocks to reserve for root so that programs may write {@code quota} bytes: the free blocks of the new file
     * system, less the clusters ext4 keeps back for itself (2% of the blocks, at most 4096), less the quota's blocks.
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

    /** Releases the engine's lock; every volume must be detached first. */
    void close() {
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException ignored) {
            // The lock goes with the channel.
        }
    }

    /**
     * The blocks only root may use at least: 5% of the quota, at least 8 MiB (the run folders and saved output of a
     * few runs) or half the quota when that is smaller, at most 256 MiB.
     */
    static long reserveFor(long quota) {
        return Math.min(256L << 20, Math.max(quota / 20, Math.min(8L << 20, quota / 2)));
    }

    private Path imageOf(Path dir) {
        return imagesDir.resolve(dir.getFileName() + IMAGE_SUFFIX);
    }

    /** Where a workspace's volume is mounted: in the engine's state, which no sandbox sees. */
    private Path volumeOf(Path dir) {
        return imagesDir.resolve(dir.getFileName() + MOUNT_SUFFIX);
    }

    /**
     * Unmounts the volumes of engines that ended without closing: loop-mounted file systems whose image lies in a
     * directory of volumes whose lock no process holds. Best effort; logs what it did.
     */
    static void reapOrphans() {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8);
        } catch (IOException e) {
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
                    || !images.getFileName().toString().equals("volumes")
                    || !isOrphaned(images.resolve(LOCK), deleted)) {
                continue;
            }
            String mountPoint = unescape(f[4]);
            try {
                run(Tools.locate().umount, "-l", mountPoint);
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

    /** Runs a host tool and waits for it; its output becomes the message of a failure. */
    private static void run(String... argv) {
        output(argv);
    }

    /** Runs a host tool, waits for it and returns what it printed. */
    private static String output(String... argv) {
        List<String> cmd = new ArrayList<>(List.of(argv));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
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
