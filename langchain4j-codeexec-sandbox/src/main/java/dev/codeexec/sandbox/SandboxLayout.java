package dev.codeexec.sandbox;

import dev.codeexec.workspace.WorkspaceGlob;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Turns a {@link PermissionProfile} into the filesystem operations of one run, looking at the host as it is now:
 * symbolic links are resolved (a hidden {@code ~/.docker} that links elsewhere hides the target), paths that do not
 * exist are skipped (nothing to hide) or refused (a grant), and workspace paths are never followed through links
 * (a link the program planted cannot redirect a mount).
 *
 * <p>Run per run, not cached: a secret created on the host after the engine started is still hidden.
 */
final class SandboxLayout {

    /** Most files visited to expand no-access globs; a bigger workspace is refused rather than half-masked. */
    static final int MAX_GLOB_WALK = 100_000;

    /**
     * Descriptors 4..8 carry the verified directories of pinned binds (the POSIX shell only redirects single digits;
     * 3 is the seccomp program and 9 the launch status).
     */
    static final int FIRST_PINNED_FD = 4;
    static final int LAST_PINNED_FD = 8;

    /** Directories replaced by a private tmpfs in every managed sandbox. */
    static final List<String> SCRATCH_DIRS = List.of("/tmp", "/var/tmp");

    /**
     * The resolved layout.
     *
     * @param mounts     the operations, unsorted
     * @param pinnedDirs host paths of the directories the launcher opens and verifies as descriptors 4, 5, … in this
     *                   order (see {@link Mount#fd()})
     */
    record Plan(List<Mount> mounts, List<String> pinnedDirs) {
        Plan {
            mounts = List.copyOf(mounts);
            pinnedDirs = List.copyOf(pinnedDirs);
        }

        /**
         * True when the program can see {@code hostPath} (absolute, real): the deepest operation at or above it is
         * not a hidden one.
         */
        boolean visible(String hostPath) {
            Mount deepest = null;
            for (Mount m : mounts) {
                boolean covers = m.path().equals("/") || hostPath.equals(m.path())
                        || hostPath.startsWith(m.path() + "/");
                if (covers && (deepest == null || m.depth() > deepest.depth())) {
                    deepest = m;
                }
            }
            return deepest != null && deepest.kind() != Mount.Kind.HIDE_DIR
                    && deepest.kind() != Mount.Kind.HIDE_FILE;
        }
    }

    private SandboxLayout() {
    }

    /**
     * Plans a run.
     *
     * <p>Binds are pinned when {@code pinDir} is given (a bubblewrap run): a bind whose path lies inside the workspace
     * or inside a write grant, where a program running at the same time may swap a name for a symbolic link between
     * this plan and the mount, never reaches bubblewrap as a name. A directory becomes a descriptor the launcher opens
     * and verifies, a file a hard link in {@code pinDir} made without following links (see {@link Mount}).
     *
     * @param profile      a managed profile (per-run grants already added)
     * @param workspace    the workspace root, real path
     * @param sandboxRoot  the directory holding every workspace and the engine's state, real path; hidden except the
     *                     workspace, and no grant may reach into it
     * @param homes        home directories for {@code ~/} rules
     * @param pinDir       a private directory of this run for the hard links of pinned files (created when needed),
     *                     or null to pin nothing (a path-based sandbox such as Seatbelt mounts nothing)
     * @throws PolicyViolationException when a grant no longer exists, is a link inside the workspace or reaches into
     *                                  the sandbox root, protected metadata is a link or a special file, or more
     *                                  directories need pinning than the launcher has descriptors for
     */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir) {
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (PermissionProfile.PathRule rule : profile.rules()) {
            if (rule.isHomePath()) {
                for (Path home : homes) {
                    if (hiddenByHostRule(profile, home)) {
                        continue; // already hidden as a whole (/root): nothing below it needs its own mount
                    }
                    hostPath(home.resolve(rule.path().substring(2)), rule.access(), rule.path(), entries);
                }
            } else if (rule.isHostPath()) {
                hostPath(Path.of(rule.path()), rule.access(), rule.path(), entries);
            } else {
                workspacePath(workspace, rule.path(), rule.access(), entries);
            }
        }
        put(entries, sandboxRoot.toString(), Entry.none(Files.isDirectory(sandboxRoot)));
        for (String s : SCRATCH_DIRS) {
            Path p = Path.of(s);
            if (Files.isDirectory(p)) {
                String real = real(p);
                if (real != null && !entries.containsKey(real)) {
                    entries.put(real, new Entry(Mount.Kind.SCRATCH));
                }
            }
        }
        if (profile.network() == NetworkMode.ENABLED) {
            // With the network on, name resolution must keep working where /etc/resolv.conf links into the hidden
            // /run (systemd-resolved, resolvconf): the one file it points at is shown read-only.
            Path resolv = Path.of("/etc/resolv.conf");
            if (Files.isSymbolicLink(resolv) && present(resolv)) {
                String real = real(resolv);
                if (real != null && !real.equals(resolv.toString()) && !entries.containsKey(real)) {
                    entries.put(real, new Entry(Mount.Kind.RO_BIND));
                }
            }
        }
        protect(profile, entries);
        if (!profile.noAccessGlobs().isEmpty()) {
            hideGlobMatches(profile, workspace, entries);
        }
        entries.keySet().removeIf(path -> path.equals("/proc") || path.startsWith("/proc/") || path.equals("/dev")
                || path.startsWith("/dev/"));
        keepOutOfSandboxRoot(entries, workspace, sandboxRoot);
        List<String> pinnedDirs = pinDir == null ? List.of() : pin(entries, workspace, pinDir);
        List<Mount> mounts = new ArrayList<>();
        entries.forEach((path, e) -> mounts.add(new Mount(path, e.kind, e.fd, e.source)));
        return new Plan(prune(mounts), pinnedDirs);
    }

    /**
     * Refuses a bind at or below the sandbox root other than the workspace and what lies in it: the root holds every
     * other workspace and the engine's state, and its stand-in (an empty directory) must stay empty but for this
     * workspace. A grant that resolves into it through a link is caught here too, since entries are real paths.
     */
    private static void keepOutOfSandboxRoot(Map<String, Entry> entries, Path workspace, Path sandboxRoot) {
        String root = sandboxRoot.toString();
        String ws = workspace.toString();
        entries.forEach((path, e) -> {
            if (e.kind.isBind() && isAtOrBelow(path, root) && !isAtOrBelow(path, ws)) {
                throw new PolicyViolationException("a grant reaches into the sandbox root, which holds every "
                        + "workspace and the engine's state; grant paths outside it");
            }
        });
    }

    /**
     * Pins every bind that lies strictly inside the workspace or a write grant (see {@link #plan}); returns the
     * directories to open as descriptors, in descriptor order. The workspace root itself is bound by name: its parent
     * belongs to the engine and no sandbox can see it, let alone change it.
     */
    private static List<String> pin(Map<String, Entry> entries, Path workspace, Path pinDir) {
        List<String> changeable = new ArrayList<>();
        changeable.add(workspace.toString());
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                changeable.add(path);
            }
        });
        List<String> dirs = new ArrayList<>();
        int files = 0;
        for (String path : new java.util.TreeSet<>(entries.keySet())) {
            Entry e = entries.get(path);
            if (!e.kind.isBind() || changeable.stream().noneMatch(r -> path.startsWith(r + "/"))) {
                continue;
            }
            String shown = display(path, workspace);
            BasicFileAttributes a = attributes(Path.of(path));
            if (a == null) {
                throw new PolicyViolationException("'" + shown + "' vanished while the sandbox was planned; "
                        + "nothing ran (a program running in the same workspace may be changing it)");
            }
            if (a.isDirectory()) {
                if (FIRST_PINNED_FD + dirs.size() > LAST_PINNED_FD) {
                    throw new PolicyViolationException("more than " + (LAST_PINNED_FD - FIRST_PINNED_FD + 1)
                            + " read-only or protected directories lie inside writable directories of this run "
                            + "(read-only stages, grants, .git); the sandbox can pin only that many. Stage fewer "
                            + "read-only directories, or stage them under one directory");
                }
                e.fd = FIRST_PINNED_FD + dirs.size();
                dirs.add(path);
            } else if (a.isRegularFile()) {
                e.source = alias(Path.of(path), pinDir.resolve("pin-" + files++), shown);
            } else {
                throw new PolicyViolationException("'" + shown + "' is " + (a.isSymbolicLink()
                        ? "a symbolic link" : "a special file") + " where the sandbox mounts a file or directory; "
                        + "refusing to run (remove it, it may have been planted)");
            }
        }
        return dirs;
    }

    /**
     * Hard-links {@code file} as {@code alias} without following a link at its name (link(2) never does), then checks
     * what the alias is: the alias lives in a directory no sandbox can reach, so what it is now it stays until the
     * mount. Returns the alias's path.
     */
    private static String alias(Path file, Path alias, String shown) {
        try {
            Files.createDirectories(alias.getParent());
            Files.createLink(alias, file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new PolicyViolationException("'" + shown + "' vanished while the sandbox was planned; nothing ran "
                    + "(a program running in the same workspace may be changing it)");
        } catch (IOException | UnsupportedOperationException e) {
            throw new PolicyViolationException("'" + shown + "' cannot be mounted safely (" + e.getClass()
                    .getSimpleName() + "): a file mounted inside a writable directory must belong to this user and "
                    + "lie on the file system of the sandbox root (SandboxEngine.Builder.rootDir); nothing ran");
        }
        BasicFileAttributes a = attributes(alias);
        if (a == null || !a.isRegularFile()) {
            try {
                Files.deleteIfExists(alias);
            } catch (IOException ignored) {
                // The run directory is removed after the run anyway.
            }
            throw new PolicyViolationException("'" + shown + "' changed into a link or a special file while the "
                    + "sandbox was planned; refusing to run (a program running in the same workspace may be swapping "
                    + "it)");
        }
        return alias.toString();
    }

    private static BasicFileAttributes attributes(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    /** A path for messages: workspace-relative inside the workspace, else only its last name (no host paths). */
    private static String display(String path, Path workspace) {
        String ws = workspace.toString();
        if (path.startsWith(ws + "/")) {
            return path.substring(ws.length() + 1);
        }
        return Path.of(path).getFileName().toString();
    }

    private static boolean isAtOrBelow(String path, String root) {
        return path.equals(root) || path.startsWith(root + "/");
    }

    /** True when a host no-access rule covers {@code p} and no grant lies between them. */
    private static boolean hiddenByHostRule(PermissionProfile profile, Path p) {
        String s = p.toString();
        String best = null;
        FileAccess bestAccess = null;
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (!r.isHostPath()) {
                continue;
            }
            String rp = r.path();
            boolean covers = rp.equals("/") || s.equals(rp) || s.startsWith(rp + "/");
            if (covers && (best == null || rp.length() > best.length()
                    || rp.length() == best.length() && r.access().precedence() > bestAccess.precedence())) {
                best = rp;
                bestAccess = r.access();
            }
        }
        return bestAccess == FileAccess.NONE;
    }

    /** Drops a hidden entry directly below another hidden entry: hiding twice only costs a mount. */
    static List<Mount> prune(List<Mount> mounts) {
        List<Mount> sorted = BwrapCommand.sort(mounts);
        List<Mount> out = new ArrayList<>();
        for (Mount m : sorted) {
            Mount parent = null;
            for (Mount o : out) {
                if (o.isStrictAncestorOf(m) && (parent == null || o.depth() > parent.depth())) {
                    parent = o;
                }
            }
            boolean hidden = m.kind() == Mount.Kind.HIDE_DIR || m.kind() == Mount.Kind.HIDE_FILE;
            if (hidden && parent != null && parent.kind() == Mount.Kind.HIDE_DIR) {
                continue;
            }
            out.add(m);
        }
        return out;
    }

    /**
     * Cheap existence test: {@code java.io.File} stats without throwing, where NIO's checks build an exception for
     * every missing path (most hidden-path candidates are missing, and this runs for every run). A dangling link
     * counts as missing: there is nothing behind it to hide or grant.
     */
    static boolean present(Path p) {
        return p.toFile().exists();
    }

    private static void hostPath(Path p, FileAccess access, String raw, Map<String, Entry> entries) {
        if (!present(p)) {
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' no longer exists on this host; refusing to run with a different layout");
            }
            return;
        }
        String real = real(p);
        if (real == null) {
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' cannot be resolved (a dangling link?)");
            }
            return;
        }
        boolean dir = Files.isDirectory(Path.of(real));
        put(entries, real, access == FileAccess.NONE ? Entry.none(dir) : Entry.grant(access));
    }

    private static void workspacePath(Path workspace, String rel, FileAccess access, Map<String, Entry> entries) {
        Path cur = workspace;
        if (!rel.equals(".")) {
            for (String part : rel.split("/")) {
                cur = cur.resolve(part);
                if (!present(cur) && !Files.isSymbolicLink(cur)) {
                    return;
                }
                if (Files.isSymbolicLink(cur)) {
                    if (access == FileAccess.NONE) {
                        // What the link points at is governed by the rules of that path; file operations still
                        // refuse this name.
                        return;
                    }
                    throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + rel
                            + "' passes through a symbolic link in the workspace; grants must name real paths");
                }
                if (!Files.exists(cur, LinkOption.NOFOLLOW_LINKS)) {
                    return;
                }
            }
        }
        boolean dir = Files.isDirectory(cur, LinkOption.NOFOLLOW_LINKS);
        put(entries, cur.toString(), access == FileAccess.NONE ? Entry.none(dir) : Entry.grant(access));
    }

    private static void protect(PermissionProfile profile, Map<String, Entry> entries) {
        List<String> writeRoots = new ArrayList<>();
        entries.forEach((p, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                writeRoots.add(p);
            }
        });
        for (String root : writeRoots) {
            for (String name : profile.protectedMetadata()) {
                Path p = Path.of(root, name);
                String key = p.toString();
                if (entries.containsKey(key) || !present(p) && !Files.isSymbolicLink(p)) {
                    continue;
                }
                if (Files.isSymbolicLink(p)) {
                    throw new PolicyViolationException("protected metadata '" + name + "' in a writable root is a "
                            + "symbolic link; refusing to run (remove the link, it may have been planted)");
                }
                // Directory or file, it is pinned like every bind inside a writable root (see pin).
                entries.put(key, new Entry(Mount.Kind.PROTECT));
            }
        }
    }

    private static void hideGlobMatches(PermissionProfile profile, Path workspace, Map<String, Entry> entries) {
        List<WorkspaceGlob> globs = profile.noAccessGlobs().stream().map(WorkspaceGlob::compile).toList();
        int[] seen = {0};
        try {
            Files.walkFileTree(workspace, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.equals(workspace)) {
                        return FileVisitResult.CONTINUE;
                    }
                    count();
                    if (matches(dir)) {
                        put(entries, dir.toString(), Entry.none(true));
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    count();
                    if (!attrs.isSymbolicLink() && matches(file)) {
                        put(entries, file.toString(), Entry.none(false));
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                private void count() {
                    if (++seen[0] > MAX_GLOB_WALK) {
                        throw new PolicyViolationException("the workspace holds more than " + MAX_GLOB_WALK
                                + " entries; refusing to run because its no-access globs cannot be applied");
                    }
                }

                private boolean matches(Path p) {
                    String rel = workspace.relativize(p).toString();
                    for (WorkspaceGlob g : globs) {
                        if (g.matches(rel)) {
                            return true;
                        }
                    }
                    return false;
                }
            });
        } catch (IOException e) {
            throw new PolicyViolationException("cannot apply the no-access globs: " + e.getClass().getSimpleName());
        }
    }

    /** Keeps the entry of higher precedence when a path already has one (none &gt; protected &gt; write &gt; read). */
    private static void put(Map<String, Entry> entries, String path, Entry e) {
        Entry old = entries.get(path);
        if (old == null || e.kind.precedence > old.kind.precedence
                || e.kind.precedence == old.kind.precedence && e.kind.ordinal() > old.kind.ordinal()) {
            entries.put(path, e);
        }
    }

    private static String real(Path p) {
        try {
            return p.toRealPath().toString();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Home directories for {@code ~/} rules: {@code /root}, every directory under {@code /home}, and the home of every
     * {@code /etc/passwd} entry that exists (system accounts whose home is {@code /} or a system directory are
     * skipped).
     */
    static List<Path> homeDirectories() {
        // Recomputed whenever /etc/passwd or /home changes (their modification times), so a new user's home is
        // covered by the next run; otherwise reused, since this runs for every run.
        long stamp = Path.of("/etc/passwd").toFile().lastModified() * 31 + Path.of("/home").toFile().lastModified();
        HomeCache c = homeCache;
        if (c != null && c.stamp == stamp) {
            return c.homes;
        }
        List<Path> homes = scanHomeDirectories();
        homeCache = new HomeCache(stamp, homes);
        return homes;
    }

    private record HomeCache(long stamp, List<Path> homes) {
    }

    private static volatile HomeCache homeCache;

    private static List<Path> scanHomeDirectories() {
        Set<Path> homes = new LinkedHashSet<>();
        homes.add(Path.of("/root"));
        try (Stream<Path> s = Files.list(Path.of("/home"))) {
            s.filter(Files::isDirectory).forEach(homes::add);
        } catch (IOException | RuntimeException ignored) {
            // No /home.
        }
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length >= 6 && f[5].startsWith("/") && f[5].length() > 1) {
                    Path h = Path.of(f[5]);
                    if (!SYSTEM_DIRS.contains(f[5]) && h.toFile().isDirectory()) {
                        homes.add(h);
                    }
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // No readable passwd.
        }
        return List.copyOf(homes);
    }

    private static final Set<String> SYSTEM_DIRS = Set.of("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/dev", "/proc",
            "/sys", "/var", "/usr", "/etc", "/run", "/tmp", "/nonexistent", "/var/empty");

    private static final class Entry {
        final Mount.Kind kind;
        int fd = -1;
        String source;

        Entry(Mount.Kind kind) {
            this.kind = kind;
        }

        static Entry none(boolean dir) {
            return new Entry(dir ? Mount.Kind.HIDE_DIR : Mount.Kind.HIDE_FILE);
        }

        static Entry grant(FileAccess access) {
            return new Entry(access == FileAccess.WRITE ? Mount.Kind.BIND : Mount.Kind.RO_BIND);
        }
    }
}
