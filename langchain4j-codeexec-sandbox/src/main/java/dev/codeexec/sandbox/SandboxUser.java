package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Who a sandboxed program is on the host. Never host root where the platform allows it: a process whose host user
 * id is 0 passes the kernel's "is it root?" checks for host-wide settings (the files under {@code /proc/sys} are
 * writable by uid 0 without any capability), and {@code RLIMIT_NPROC} does not apply to it.
 *
 * <ul>
 *   <li>{@link Mode#SAME}: the JVM is not root; programs run as the JVM's own user (mapped to itself inside).</li>
 *   <li>{@link Mode#DROP}: the JVM is root; the launching shell executes bubblewrap through {@code setpriv} as an
 *       unprivileged user that nothing else on the host uses ({@value #DEFAULT_UID} unless configured), which
 *       bubblewrap maps to itself inside. The engine's workspaces belong to that user, so programs can write them,
 *       and the engine (root) can still read and remove whatever they create. The directories above them must be
 *       searchable by that user: bubblewrap, running as it, resolves every path it mounts.</li>
 *   <li>{@link Mode#ROOT}: the JVM is root but cannot change user ({@code setpriv} is missing, or this host refuses
 *       user namespaces to unprivileged users): programs run as root with every capability dropped; only the
 *       read-only {@code /proc} and {@code /sys} keep them from host-wide settings, and process limits need
 *       control groups.</li>
 * </ul>
 */
final class SandboxUser {

    /** Default host user and group id of sandboxed programs when the JVM runs as root. */
    static final int DEFAULT_UID = 99999;
    static final int DEFAULT_GID = 99999;

    static final List<String> SETPRIV_LOCATIONS = List.of("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv",
            "/sbin/setpriv");

    enum Mode { SAME, DROP, ROOT }

    /** Tests only: behave as on a host where a root JVM cannot change user (no setpriv). */
    static volatile boolean rootForTests;

    private final Mode mode;
    private final int uid;
    private final int gid;
    private final String setpriv;

    private SandboxUser(Mode mode, int uid, int gid, String setpriv) {
        this.mode = mode;
        this.uid = uid;
        this.gid = gid;
        this.setpriv = setpriv;
    }

    /**
     * The identity for this JVM.
     *
     * @param uid the unprivileged host user for a root JVM, or null for {@value #DEFAULT_UID}
     * @param gid its group, or null for {@value #DEFAULT_GID}
     * @throws InvalidSpecException when the configured user is root or belongs to an account of this host
     */
    static SandboxUser detect(Integer uid, Integer gid) {
        int[] self = currentIds();
        if (self[0] != 0) {
            return new SandboxUser(Mode.SAME, self[0], self[1], null);
        }
        int u = uid == null ? DEFAULT_UID : uid;
        int g = gid == null ? DEFAULT_GID : gid;
        if (u <= 0 || g <= 0) {
            throw new InvalidSpecException("the sandbox user (" + u + ":" + g + ") must not be root");
        }
        String account = accountOf(u);
        if (account != null) {
            throw new InvalidSpecException("the sandbox user id " + u + " belongs to the host account '" + account
                    + "'; sandboxed programs need a user id that nothing else on the host uses (a process of that "
                    + "account could reach into every sandbox); choose another with SandboxEngine.Builder"
                    + ".sandboxUser");
        }
        String sp = rootForTests ? null : locate();
        return sp == null ? new SandboxUser(Mode.ROOT, 0, 0, null) : new SandboxUser(Mode.DROP, u, g, sp);
    }

    /** Programs run as the JVM's own user (tests, and the fallback when a drop is refused by the host). */
    static SandboxUser of(Mode mode, int uid, int gid, String setpriv) {
        return new SandboxUser(mode, uid, gid, setpriv);
    }

    /**
     * The user for a run in a host directory of the operator's (the command line's {@code --workspace}): its owner,
     * so that the program can write it and what it creates belongs to that user; the engine's own user when it owns
     * the directory or the JVM is not root.
     *
     * @throws PolicyViolationException when the directory belongs to root (programs never run as root), or its owner
     *                                  cannot reach it
     */
    SandboxUser forDirectory(Path dir) {
        if (mode != Mode.DROP) {
            return this;
        }
        int owner = ownedBy(dir);
        if (owner == uid) {
            return this;
        }
        if (owner <= 0) {
            throw new PolicyViolationException("workspace directory '" + dir.getFileName() + "' belongs to root; "
                    + "sandboxed programs never run as root, so they could not write it. Give the directory to the "
                    + "user the programs should run as (chown), for example the sandbox user " + uid + ":" + gid);
        }
        int group = primaryGroupOf(owner);
        SandboxUser u = new SandboxUser(Mode.DROP, owner, group > 0 ? group : gid, setpriv);
        Path blocked = u.firstUnsearchable(dir);
        if (blocked != null) {
            throw new PolicyViolationException("workspace directory '" + dir.getFileName() + "' cannot be reached by "
                    + "its owner (uid " + owner + "), as which the program runs: '" + blocked + "' is not "
                    + "searchable by it");
        }
        return u;
    }

    private static int primaryGroupOf(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length > 3 && f[2].equals(Integer.toString(uid))) {
                    return Integer.parseInt(f[3]);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // Unknown: the sandbox group.
        }
        return -1;
    }

    /** The same engine without the change of user: programs run as root (capabilities dropped). */
    SandboxUser asRoot() {
        return new SandboxUser(Mode.ROOT, 0, 0, null);
    }

    Mode mode() {
        return mode;
    }

    /** The program's host user id (0 in {@link Mode#ROOT}). */
    int uid() {
        return uid;
    }

    int gid() {
        return gid;
    }

    boolean drops() {
        return mode == Mode.DROP;
    }

    /** True when programs are not host root, so that RLIMIT_NPROC applies to them. */
    boolean unprivileged() {
        return mode != Mode.ROOT;
    }

    /** Human-readable summary for logs and messages. */
    String describe() {
        return switch (mode) {
            case SAME -> "uid " + uid + " (the JVM's user)";
            case DROP -> "uid " + uid + ":" + gid + " (unprivileged, via setpriv)";
            case ROOT -> "root with no capabilities (setpriv or unprivileged user namespaces unavailable)";
        };
    }

    /**
     * What comes before bubblewrap on the launcher's command line: {@code setpriv} changing to the sandbox user
     * (real, effective and saved ids; no supplementary groups) when the JVM is root; nothing otherwise.
     */
    List<String> launchPrefix() {
        if (mode != Mode.DROP) {
            return List.of();
        }
        return List.of(setpriv, "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--");
    }

    /** bubblewrap's identity options: the program's id inside is its host id (never root unless the host's is). */
    List<String> bwrapIdentity() {
        if (mode == Mode.ROOT) {
            return List.of();
        }
        return List.of("--uid", Integer.toString(uid), "--gid", Integer.toString(gid));
    }

    /**
     * Prepares the engine's own directories for a change of user: the sandbox root, the state directory and the
     * directories that hold workspaces and runs become searchable (not listable) by others, {@code 0711}, because
     * bubblewrap resolves every mount source as the sandbox user; their contents stay private (workspaces belong to
     * the sandbox user with mode 0700, the state files are named at random or hold nothing secret). Then checks
     * that every directory above {@code deepest} can be searched by the sandbox user.
     *
     * @throws BackendUnavailableException naming the directory that the sandbox user cannot search
     */
    void prepare(Path deepest, Path... own) {
        if (mode != Mode.DROP) {
            return;
        }
        for (Path p : own) {
            try {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx--x--x"));
            } catch (IOException | UnsupportedOperationException e) {
                throw new CodeExecException("cannot open " + p.getFileName() + " for the sandbox user: " + e, e);
            }
        }
        Path blocked = firstUnsearchable(deepest);
        if (blocked != null) {
            throw new BackendUnavailableException("the sandbox user (uid " + uid + ") cannot reach the sandbox root: "
                    + "'" + blocked + "' is not searchable by it. Programs do not run as root; bubblewrap, running as "
                    + "that user, must be able to reach every path it mounts. Choose a sandbox root below directories "
                    + "others can search (SandboxEngine.Builder.rootDir; the default below the system temporary "
                    + "directory works), or give '" + blocked + "' the search permission (chmod o+x)");
        }
    }

    /** The first directory from {@code /} down to {@code p} (inclusive) the sandbox user cannot search, or null. */
    Path firstUnsearchable(Path p) {
        if (mode != Mode.DROP) {
            return null;
        }
        Path abs = p.toAbsolutePath().normalize();
        Path cur = abs.getRoot();
        List<Path> chain = new ArrayList<>();
        chain.add(cur);
        for (Path part : abs) {
            cur = cur.resolve(part);
            chain.add(cur);
        }
        for (Path d : chain) {
            if (!allows(d, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_EXECUTE)) {
                return d;
            }
        }
        return null;
    }

    /** True when the sandbox user may read {@code p} (and, for a directory, list and search it). */
    boolean canRead(Path p) {
        if (mode != Mode.DROP) {
            return true;
        }
        if (!allows(p, PosixFilePermission.OWNER_READ, PosixFilePermission.GROUP_READ,
                PosixFilePermission.OTHERS_READ)) {
            return false;
        }
        return !Files.isDirectory(p) || allows(p, PosixFilePermission.OWNER_EXECUTE,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
    }

    /** True when the sandbox user may write {@code p} (for a directory: create and remove entries in it). */
    boolean canWrite(Path p) {
        if (mode != Mode.DROP) {
            return true;
        }
        if (!allows(p, PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_WRITE,
                PosixFilePermission.OTHERS_WRITE)) {
            return false;
        }
        return !Files.isDirectory(p) || allows(p, PosixFilePermission.OWNER_EXECUTE,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
    }

    /** The classic permission check for the sandbox user (no supplementary groups; ACLs are not consulted). */
    private boolean allows(Path p, PosixFilePermission owner, PosixFilePermission group, PosixFilePermission other) {
        try {
            var a = Files.readAttributes(p, "unix:uid,gid,mode");
            int fileUid = (Integer) a.get("uid");
            int fileGid = (Integer) a.get("gid");
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
            if (fileUid == uid) {
                return perms.contains(owner);
            }
            if (fileGid == gid) {
                return perms.contains(group);
            }
            return perms.contains(other);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Gives one path (not following a link at it) to the sandbox user. */
    void claim(Path p) {
        if (mode != Mode.DROP) {
            return;
        }
        try {
            Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new CodeExecException("cannot give '" + p.getFileName() + "' to the sandbox user: "
                    + e.getClass().getSimpleName(), e);
        }
    }

    /**
     * Gives {@code root} and everything below it to the sandbox user, without following links (a link is changed
     * itself, never what it points at). Only for trees no program can change meanwhile.
     */
    void claimTree(Path root) {
        if (mode != Mode.DROP || !Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    claim(dir);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    claim(file);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new CodeExecException("cannot give a directory to the sandbox user: " + e.getClass()
                    .getSimpleName(), e);
        }
    }

    /**
     * Gives {@code rel} (workspace-relative, "." for the root) and each of its ancestors below the workspace root
     * to the sandbox user: the directories a host-side write created on the way.
     */
    void claimPath(Path workspace, String rel) {
        if (mode != Mode.DROP || rel.equals(".")) {
            return;
        }
        Path cur = workspace;
        for (String part : rel.split("/")) {
            cur = cur.resolve(part);
            BasicFileAttributes a = lstat(cur);
            if (a == null) {
                return;
            }
            if (a.isSymbolicLink()) {
                return; // a program's link: nothing below it is the host's write
            }
            if (ownedBy(cur) != uid) {
                claim(cur);
            }
        }
    }

    private static int ownedBy(Path p) {
        try {
            return (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return -1;
        }
    }

    private static BasicFileAttributes lstat(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    /** The effective user and group ids of this JVM, from /proc/self/status. */
    static int[] currentIds() {
        int u = -1;
        int g = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    u = Integer.parseInt(line.split("\\s+")[2]);
                } else if (line.startsWith("Gid:")) {
                    g = Integer.parseInt(line.split("\\s+")[2]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux: macOS keeps programs as the JVM's user anyway.
        }
        if (u < 0) {
            u = "root".equals(System.getProperty("user.name")) ? 0 : 1;
        }
        return new int[]{u, Math.max(g, 0)};
    }

    /** The account name of {@code uid} in /etc/passwd, or null. */
    static String accountOf(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length > 2 && f[2].equals(Integer.toString(uid))) {
                    return f[0];
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // No readable passwd: nothing known to collide with.
        }
        return null;
    }

    private static String locate() {
        for (String p : SETPRIV_LOCATIONS) {
            if (Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return describe();
    }
}
