package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.workspace.WorkspaceGlob;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Turns a {@link PermissionProfile} into the filesystem operations of one run, looking at the host as it is now:
 * symbolic links are resolved (a hidden {@code ~/.docker} that links elsewhere hides the target), paths that do not
 * exist are skipped (nothing to hide) or refused (a grant), and paths a sandbox can change are never followed
 * through links (a link a program planted cannot redirect a mount).
 *
 * <p>What one run leaves behind cannot change what the next run's rules mean:
 * <ul>
 *   <li>a rule's path inside a writable directory (the workspace, a write grant) is resolved without following a
 *       link there: a grant through such a link is refused, a no-access rule on one hides nothing (the link's target
 *       is governed by its own rules);</li>
 *   <li>every directory between a writable root and something a rule names there (a hidden, protected or read-only
 *       path) is {@linkplain Mount.Kind#KEEP held in place}: a mount point, which no program can rename or remove,
 *       so the named thing stays where its name says, run after run. A hidden file with another hard link cannot be
 *       kept hidden, and the run is refused, naming the rule;</li>
 *   <li>protected metadata is protected at the top of every writable root, and wherever it appears inside a host
 *       directory granted writable (or a host directory used as the workspace); a name that does not exist at a
 *       writable root is occupied by an empty read-only placeholder, so that no program can create it there
 *       (unless the profile {@linkplain PermissionProfile#withProtectedMetadataCreation allows it}); a protected tree
 *       with a file that has another hard link, or a link into a writable directory, is refused, because that other
 *       name would keep it writable;</li>
 *   <li>nothing that lets a program change host-wide kernel state is writable: write grants at or below
 *       {@code /proc}, {@code /sys} or {@code /dev} are refused, and kernel interface file systems mounted inside a
 *       write grant are remounted read-only.</li>
 * </ul>
 *
 * <p>Run per run, not cached (except the verification of a protected tree, which only a host process can change):
 * a secret created on the host after the engine started is still hidden.
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

    /** Host trees whose writable binds would let a program change host-wide kernel or device state. */
    static final List<String> KERNEL_TREES = List.of("/proc", "/sys", "/dev");

    /** File systems through which a program could change host-wide kernel state; kept read-only wherever mounted. */
    static final Set<String> KERNEL_FILE_SYSTEMS = Set.of("proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs",
            "securityfs", "bpf", "configfs", "fusectl", "pstore", "efivarfs", "binfmt_misc", "selinuxfs", "nfsd",
            "rpc_pipefs", "hugetlbfs", "mqueue", "devtmpfs", "devpts", "autofs");

    /** Protected trees verified free of hard links and escaping links, by path and identity (see verify). */
    private static final Set<String> VERIFIED = ConcurrentHashMap.newKeySet();
    private static final int MAX_VERIFIED = 4096;

    /**
     * The resolved layout.
     *
     * @param mounts       the operations, unsorted
     * @param pinnedDirs   host paths of the directories the launcher opens and verifies as descriptors 4, 5, … in
     *                     this order (see {@link Mount#fd()})
     * @param checkedDirs  host paths of directories bound by name that the launcher checks are still the planned
     *                     physical directories (directories held in place inside the workspace)
     * @param placeholders empty directories bubblewrap creates as mount points for protected names that did not
     *                     exist; removed after the run ({@link #removePlaceholders})
     */
    record Plan(List<Mount> mounts, List<String> pinnedDirs, List<String> checkedDirs, List<String> placeholders) {
        Plan {
            mounts = List.copyOf(mounts);
            pinnedDirs = List.copyOf(pinnedDirs);
            checkedDirs = List.copyOf(checkedDirs);
            placeholders = List.copyOf(placeholders);
        }

        Plan(List<Mount> mounts, List<String> pinnedDirs) {
            this(mounts, pinnedDirs, List.of(), List.of());
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
            return deepest != null && !deepest.kind().isHidden();
        }

        /**
         * Removes the placeholders this run's bubblewrap created, once the run is over: each only while it is still
         * an empty directory (never a link, never anything a program or the host put there).
         */
        void removePlaceholders() {
            for (String p : placeholders) {
                Path d = Path.of(p);
                try {
                    if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                        Files.delete(d); // rmdir: only an empty directory goes
                    }
                } catch (IOException ignored) {
                    // Not empty after all, or gone: left as it is.
                }
            }
        }
    }

    private SandboxLayout() {
    }

    /** {@link #plan(PermissionProfile, Path, Path, List, Path, SandboxUser)} for programs of the JVM's own user. */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir) {
        return plan(profile, workspace, sandboxRoot, homes, pinDir, null);
    }

    /**
     * Plans a run.
     *
     * <p>Binds are pinned when {@code pinDir} is given (a bubblewrap run): a bind whose path lies inside the workspace
     * or inside a write grant, where a program running at the same time may swap a name for a symbolic link between
     * this plan and the mount, never reaches bubblewrap as a name. A directory becomes a descriptor the launcher opens
     * and verifies, a file a hard link in {@code pinDir} made without following links (see {@link Mount}).
     * Directories held in place inside the workspace are bound by name and checked by the launcher: nothing else
     * runs in a workspace while a run of it is set up.
     *
     * @param profile     a managed profile (per-run grants already added)
     * @param workspace   the workspace root, real path
     * @param sandboxRoot the directory holding every workspace and the engine's state, real path; hidden except the
     *                    workspace, and no grant may reach into it
     * @param homes       home directories for {@code ~/} rules
     * @param pinDir      a private directory of this run for the hard links of pinned files (created when needed),
     *                    or null to pin nothing (a path-based sandbox such as Seatbelt mounts nothing)
     * @param user        who the program runs as (grants it cannot use are refused); null for the JVM's user
     * @throws PolicyViolationException when a grant no longer exists, passes through a link inside a writable
     *                                  directory or reaches into the sandbox root, protected metadata is a link, a
     *                                  special file or has another name, a hidden file has another name, or more
     *                                  directories need pinning than the launcher has descriptors for
     * @throws InvalidSpecException     when a grant would make host kernel state writable, or the program's user
     *                                  cannot use a grant
     */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir,
                     SandboxUser user) {
        Map<String, Entry> entries = new LinkedHashMap<>();
        List<String> changeable = new ArrayList<>();
        changeable.add(workspace.toString());
        boolean hostWorkspace = !isAtOrBelow(workspace.toString(), sandboxRoot.toString());

        // Write grants first, shallowest first, so that each later rule knows every directory a sandbox can change.
        List<PermissionProfile.PathRule> rules = new ArrayList<>(profile.rules());
        List<PermissionProfile.PathRule> ordered = new ArrayList<>();
        rules.stream().filter(r -> r.access() == FileAccess.WRITE)
                .sorted((a, b) -> Integer.compare(depth(a.path()), depth(b.path()))).forEach(ordered::add);
        rules.stream().filter(r -> r.access() != FileAccess.WRITE).forEach(ordered::add);
        for (PermissionProfile.PathRule rule : ordered) {
            if (rule.isHomePath()) {
                for (Path home : homes) {
                    if (hiddenByHostRule(profile, home)) {
                        continue; // already hidden as a whole (/root): nothing below it needs its own mount
                    }
                    hostPath(home.resolve(rule.path().substring(2)).toString(), rule.access(), rule.path(), entries,
                            changeable);
                }
            } else if (rule.isHostPath()) {
                hostPath(rule.path(), rule.access(), rule.path(), entries, changeable);
            } else {
                workspacePath(workspace, rule.path(), rule.access(), entries);
            }
            if (rule.access() == FileAccess.WRITE) {
                entries.forEach((p, e) -> {
                    if (e.kind == Mount.Kind.BIND && !changeable.contains(p)) {
                        changeable.add(p);
                    }
                });
            }
        }
        put(entries, sandboxRoot.toString(), Entry.none(Files.isDirectory(sandboxRoot), "the sandbox root"));
        for (String s : SCRATCH_DIRS) {
            Path p = Path.of(s);
            if (Files.isDirectory(p)) {
                String real = real(p);
                if (real != null && !entries.containsKey(real)) {
                    entries.put(real, new Entry(Mount.Kind.SCRATCH, null));
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
                    entries.put(real, new Entry(Mount.Kind.RO_BIND, null));
                }
            }
        }
        refuseWritableKernelTrees(entries);
        List<String> placeholders = new ArrayList<>();
        protect(profile, entries, workspace, sandboxRoot, hostWorkspace, placeholders);
        if (!profile.noAccessGlobs().isEmpty()) {
            hideGlobMatches(profile, workspace, entries);
        }
        entries.keySet().removeIf(path -> path.equals("/proc") || path.startsWith("/proc/") || path.equals("/dev")
                || path.startsWith("/dev/"));
        keepOutOfSandboxRoot(entries, workspace, sandboxRoot);
        remountKernelFileSystems(entries, sandboxRoot);
        refuseHiddenFilesWithOtherNames(entries);
        holdInPlace(entries);
        verifyProtectedTrees(entries, workspace);
        if (user != null) {
            checkUsable(entries, workspace, user);
        }
        List<String> checked = new ArrayList<>();
        List<String> pinnedDirs = pinDir == null ? List.of() : pin(entries, workspace, pinDir, checked);
        List<Mount> mounts = new ArrayList<>();
        entries.forEach((path, e) -> mounts.add(new Mount(path, e.kind, e.fd, e.source)));
        return new Plan(prune(mounts), pinnedDirs, checked, placeholders);
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

    /** A writable bind at or below /proc, /sys or /dev would let a program change the host's kernel or devices. */
    private static void refuseWritableKernelTrees(Map<String, Entry> entries) {
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                for (String k : KERNEL_TREES) {
                    if (isAtOrBelow(path, k)) {
                        throw new InvalidSpecException("write grant '" + (e.rule == null ? path : e.rule)
                                + "' resolves into " + k + ", whose files change host-wide kernel or device "
                                + "settings; nothing in a sandbox may write there");
                    }
                }
            }
        });
    }

    /**
     * Kernel interface file systems the host mounted below a writable bind (outside the sandbox root: the engine's
     * workspaces hold none) are remounted read-only: the bind would otherwise carry them writable into the sandbox.
     */
    private static void remountKernelFileSystems(Map<String, Entry> entries, Path sandboxRoot) {
        List<String> writable = new ArrayList<>();
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND && !isAtOrBelow(path, sandboxRoot.toString())) {
                writable.add(path);
            }
        });
        if (writable.isEmpty()) {
            return;
        }
        for (String[] m : HostMounts.read()) {
            String point = m[0];
            if (!KERNEL_FILE_SYSTEMS.contains(m[1]) || entries.containsKey(point)) {
                continue;
            }
            for (String w : writable) {
                if (isAtOrBelow(point, w)) {
                    entries.put(point, new Entry(Mount.Kind.REMOUNT_RO, null));
                    break;
                }
            }
        }
    }

    /** A hidden file inside a writable root with another hard link would show its content under that other name. */
    private static void refuseHiddenFilesWithOtherNames(Map<String, Entry> entries) {
        List<String> writable = writableRoots(entries);
        entries.forEach((path, e) -> {
            if (e.kind != Mount.Kind.HIDE_FILE || writable.stream().noneMatch(w -> path.startsWith(w + "/"))) {
                return;
            }
            int links = links(Path.of(path));
            if (links > 1) {
                throw new PolicyViolationException("no-access rule '" + (e.rule == null ? Path.of(path)
                        .getFileName() : e.rule) + "' cannot be kept: the hidden file has " + links + " names (hard "
                        + "links), and another name inside a writable directory would show its content. Nothing ran;"
                        + " remove the other link or the file");
            }
        });
    }

    /**
     * Holds in place every directory between a writable bind and an entry inside it that a rule names (hidden,
     * protected, read-only, placeholder, kernel remount): each becomes a {@link Mount.Kind#KEEP} bind, a mount point a
     * program can neither rename nor remove. Without it, a program could rename a parent and move the named thing to
     * a name no rule covers for the next run.
     */
    private static void holdInPlace(Map<String, Entry> entries) {
        List<String> paths = new ArrayList<>(entries.keySet());
        Set<String> all = new java.util.HashSet<>(paths);
        for (String path : paths) {
            Entry e = entries.get(path);
            if (e.kind == Mount.Kind.BIND || e.kind == Mount.Kind.SCRATCH || path.equals("/")) {
                continue;
            }
            String enclosing = null;
            for (String q = parent(path); q != null; q = parent(q)) {
                if (all.contains(q)) {
                    enclosing = q;
                    break;
                }
            }
            if (enclosing == null || !entries.get(enclosing).kind.isWritable()) {
                continue;
            }
            for (String q = parent(path); q != null && !q.equals(enclosing); q = parent(q)) {
                if (!entries.containsKey(q)) {
                    entries.put(q, new Entry(Mount.Kind.KEEP, e.rule));
                    all.add(q);
                }
            }
        }
    }

    /** The parent of an absolute path, or null for "/". */
    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        if (slash < 0 || path.equals("/")) {
            return null;
        }
        return slash == 0 ? "/" : path.substring(0, slash);
    }

    /**
     * Pins every bind that lies strictly inside the workspace or a write grant (see {@link #plan}); returns the
     * directories to open as descriptors, in descriptor order, and adds to {@code checked} the directories held in
     * place inside the workspace (bound by name, checked by the launcher). The workspace root itself is bound by
     * name: its parent belongs to the engine and no sandbox can see it, let alone change it.
     */
    private static List<String> pin(Map<String, Entry> entries, Path workspace, Path pinDir, List<String> checked) {
        List<String> changeable = new ArrayList<>();
        changeable.add(workspace.toString());
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                changeable.add(path);
            }
        });
        String ws = workspace.toString();
        List<String> dirs = new ArrayList<>();
        int files = 0;
        for (String path : new TreeSet<>(entries.keySet())) {
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
            if (e.kind == Mount.Kind.KEEP && a.isDirectory() && path.startsWith(ws + "/")) {
                // Inside the workspace only: no other program can change it before the mount (one per workspace).
                checked.add(path);
                continue;
            }
            if (a.isDirectory()) {
                if (FIRST_PINNED_FD + dirs.size() > LAST_PINNED_FD) {
                    throw new PolicyViolationException("more than " + (LAST_PINNED_FD - FIRST_PINNED_FD + 1)
                            + " read-only or protected directories lie inside writable directories of this run "
                            + "(read-only stages, grants, .git, and the directories that hold hidden or protected "
                            + "paths of write grants in place); the sandbox can pin only that many. Stage fewer "
                            + "read-only directories, or stage them under one directory"
                            + (e.rule == null ? "" : " (rule '" + e.rule + "')"));
                }
                e.fd = FIRST_PINNED_FD + dirs.size();
                dirs.add(path);
            } else if (a.isRegularFile() && e.kind != Mount.Kind.KEEP) {
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
        Path name = Path.of(path).getFileName();
        return name == null ? path : name.toString();
    }

    private static boolean isAtOrBelow(String path, String root) {
        return path.equals(root) || root.equals("/") || path.startsWith(root + "/");
    }

    private static int depth(String path) {
        int d = 0;
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                d++;
            }
        }
        return d;
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
            if (m.kind().isHidden() && parent != null && parent.kind() == Mount.Kind.HIDE_DIR) {
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

    /** Outcome of resolving a rule's host path. */
    private record Resolved(String real, String linkInside) {
    }

    /**
     * Resolves a host path like realpath(3), but refuses to follow a symbolic link that lies inside a directory a
     * sandbox can change ({@code changeable}): such a link may have been planted by a program, and the rule means the
     * path, not whatever a program made it lead to. Returns the real path, or null when the path does not exist, or
     * the link (as its host path) when one was met inside a changeable directory.
     */
    private static Resolved resolveHostPath(String path, List<String> changeable) {
        Deque<String> todo = new ArrayDeque<>();
        for (String part : path.split("/")) {
            if (!part.isEmpty()) {
                todo.add(part);
            }
        }
        String cur = "/";
        int hops = 0;
        while (!todo.isEmpty()) {
            String part = todo.pollFirst();
            if (part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                String up = parent(cur);
                cur = up == null ? "/" : up;
                continue;
            }
            String next = cur.equals("/") ? "/" + part : cur + "/" + part;
            Path np = Path.of(next);
            BasicFileAttributes a = attributes(np);
            if (a == null) {
                return new Resolved(null, null);
            }
            if (a.isSymbolicLink()) {
                for (String c : changeable) {
                    if (next.startsWith(c + "/")) {
                        return new Resolved(null, next);
                    }
                }
                if (++hops > 40) {
                    return new Resolved(null, null);
                }
                String target;
                try {
                    target = Files.readSymbolicLink(np).toString();
                } catch (IOException e) {
                    return new Resolved(null, null);
                }
                List<String> parts = new ArrayList<>();
                for (String t : target.split("/")) {
                    if (!t.isEmpty()) {
                        parts.add(t);
                    }
                }
                Collections.reverse(parts);
                parts.forEach(todo::addFirst);
                if (target.startsWith("/")) {
                    cur = "/";
                }
                continue;
            }
            cur = next;
        }
        return new Resolved(cur, null);
    }

    private static void hostPath(String p, FileAccess access, String raw, Map<String, Entry> entries,
                                 List<String> changeable) {
        if (!present(Path.of(p))) {
            // Missing, or a dangling link: nothing to hide; a grant that vanished is refused.
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' no longer exists on this host; refusing to run with a different layout");
            }
            return;
        }
        Resolved r = resolveHostPath(p, changeable);
        if (r.linkInside != null) {
            if (access == FileAccess.NONE) {
                // A link inside a writable directory: what it points at is governed by the rules of that path.
                return;
            }
            throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw + "' passes through "
                    + "a symbolic link inside a writable directory (a program may have planted it); grants must name "
                    + "real paths there");
        }
        if (r.real == null) {
            if (access != FileAccess.NONE) {
                throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + raw
                        + "' no longer exists on this host; refusing to run with a different layout");
            }
            return;
        }
        boolean dir = Files.isDirectory(Path.of(r.real), LinkOption.NOFOLLOW_LINKS);
        put(entries, r.real, access == FileAccess.NONE ? Entry.none(dir, raw) : Entry.grant(access, raw));
    }

    private static void workspacePath(Path workspace, String rel, FileAccess access, Map<String, Entry> entries) {
        Path cur = workspace;
        if (!rel.equals(".")) {
            for (String part : rel.split("/")) {
                cur = cur.resolve(part);
                BasicFileAttributes a = attributes(cur);
                if (a == null) {
                    return;
                }
                if (a.isSymbolicLink()) {
                    if (access == FileAccess.NONE) {
                        // What the link points at is governed by the rules of that path; file operations still
                        // refuse this name.
                        return;
                    }
                    throw new PolicyViolationException(access.name().toLowerCase() + " grant '" + rel
                            + "' passes through a symbolic link in the workspace; grants must name real paths");
                }
            }
        }
        boolean dir = Files.isDirectory(cur, LinkOption.NOFOLLOW_LINKS);
        put(entries, cur.toString(), access == FileAccess.NONE ? Entry.none(dir, rel) : Entry.grant(access, rel));
    }

    /** The writable binds: the roots inside which a program can create, rename and link. */
    private static List<String> writableRoots(Map<String, Entry> entries) {
        List<String> roots = new ArrayList<>();
        entries.forEach((p, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                roots.add(p);
            }
        });
        return roots;
    }

    /**
     * Protected metadata: at the top of every writable root (existing: read-only; missing, or an empty directory left
     * by an interrupted run: an empty read-only placeholder, unless the profile allows creating it), below the roots
     * where the workspace or a write grant is a host directory (found by a walk), and where the application staged it
     * (read rules of the workspace whose path ends in a protected name). A write grant reaching into protected
     * metadata is refused.
     */
    private static void protect(PermissionProfile profile, Map<String, Entry> entries, Path workspace,
                                Path sandboxRoot, boolean hostWorkspace, List<String> placeholders) {
        List<String> names = profile.protectedMetadata();
        List<String> writeRoots = writableRoots(entries);
        // Staged protected metadata arrives as read rules: it is protected, not merely read-only.
        entries.forEach((p, e) -> {
            if (e.kind == Mount.Kind.RO_BIND && names.contains(Path.of(p).getFileName() == null ? ""
                    : Path.of(p).getFileName().toString())
                    && writeRoots.stream().anyMatch(w -> p.startsWith(w + "/"))) {
                e.kind = Mount.Kind.PROTECT;
            }
        });
        for (String root : writeRoots) {
            if (!Files.isDirectory(Path.of(root), LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            for (String name : names) {
                Path p = Path.of(root, name);
                String key = p.toString();
                Entry existing = entries.get(key);
                if (existing != null) {
                    if (existing.kind == Mount.Kind.BIND) {
                        throw new InvalidSpecException("write grant '" + existing.rule + "' is protected metadata '"
                                + name + "' of a writable directory, which stays read-only; grant a path outside it");
                    }
                    continue;
                }
                BasicFileAttributes a = attributes(p);
                if (a != null && a.isSymbolicLink()) {
                    throw new PolicyViolationException("protected metadata '" + name + "' in a writable root is a "
                            + "symbolic link; refusing to run (remove the link, it may have been planted)");
                }
                if (a == null || a.isDirectory() && isEmptyDirectory(p)) {
                    if (!profile.allowsProtectedMetadataCreation()) {
                        // Occupied for the run by an empty read-only directory: no program can create it here.
                        entries.put(key, new Entry(Mount.Kind.PLACEHOLDER, name));
                        placeholders.add(key);
                    }
                    continue;
                }
                // Directory or file, it is pinned like every bind inside a writable root (see pin).
                entries.put(key, new Entry(Mount.Kind.PROTECT, name));
            }
        }
        // Below the roots of host directories a sandbox can write: every repository there is the host's.
        for (String root : writeRoots) {
            boolean engineWorkspace = root.equals(workspace.toString()) && !hostWorkspace;
            if (engineWorkspace || isAtOrBelow(root, sandboxRoot.toString()) && !hostWorkspace) {
                continue;
            }
            findNestedProtected(Path.of(root), names, entries);
        }
        // No writable bind at or below protected metadata: it would make it writable again.
        Map<String, Entry> snapshot = new LinkedHashMap<>(entries);
        snapshot.forEach((p, e) -> {
            if (e.kind != Mount.Kind.PROTECT) {
                return;
            }
            snapshot.forEach((q, f) -> {
                if (f.kind == Mount.Kind.BIND && q.startsWith(p + "/")) {
                    throw new InvalidSpecException("write grant '" + f.rule + "' lies inside protected metadata '"
                            + Path.of(p).getFileName() + "', which stays read-only; grant a path outside it");
                }
            });
        });
    }

    /** Walks a host directory granted writable for protected names below its top, without following links. */
    private static void findNestedProtected(Path root, List<String> names, Map<String, Entry> entries) {
        int[] seen = {0};
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.equals(root)) {
                        return FileVisitResult.CONTINUE;
                    }
                    count();
                    Entry e = entries.get(dir.toString());
                    if (e != null && !e.kind.isWritable()) {
                        return FileVisitResult.SKIP_SUBTREE; // hidden, protected or read-only already
                    }
                    if (names.contains(dir.getFileName().toString()) && !dir.getParent().equals(root)) {
                        entries.put(dir.toString(), new Entry(Mount.Kind.PROTECT, dir.getFileName().toString()));
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    count();
                    if (names.contains(file.getFileName().toString()) && !file.getParent().equals(root)
                            && !entries.containsKey(file.toString())) {
                        if (attrs.isSymbolicLink()) {
                            throw new PolicyViolationException("protected metadata '" + file.getFileName()
                                    + "' inside a writable directory is a symbolic link; refusing to run (remove the "
                                    + "link, it may have been planted)");
                        }
                        if (attrs.isRegularFile()) {
                            entries.put(file.toString(), new Entry(Mount.Kind.PROTECT, file.getFileName()
                                    .toString()));
                        }
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                private void count() {
                    if (++seen[0] > MAX_GLOB_WALK) {
                        throw new PolicyViolationException("a writable host directory holds more than "
                                + MAX_GLOB_WALK + " entries; refusing to run because its repositories' metadata "
                                + "cannot all be found and protected; grant a smaller directory");
                    }
                }
            });
        } catch (IOException e) {
            throw new PolicyViolationException("cannot look for protected metadata in a writable directory: "
                    + e.getClass().getSimpleName());
        }
    }

    /**
     * Protected metadata must have no other name a program could write through: no regular file in it with another
     * hard link, and no symbolic link in it that leads into a writable directory. Only a program that could write the
     * tree before it was protected can have made such a name, so a tree is verified once per identity (a host process
     * that changes it is trusted).
     */
    private static void verifyProtectedTrees(Map<String, Entry> entries, Path workspace) {
        List<String> writable = writableRoots(entries);
        entries.forEach((path, e) -> {
            if (e.kind != Mount.Kind.PROTECT) {
                return;
            }
            Path root = Path.of(path);
            BasicFileAttributes a = attributes(root);
            if (a == null || a.isSymbolicLink()) {
                return; // vanished or swapped: pin() refuses it
            }
            String key = path + "\0" + a.fileKey();
            if (VERIFIED.contains(key)) {
                return;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                walk.forEach(p -> {
                    BasicFileAttributes pa = attributes(p);
                    if (pa == null) {
                        return;
                    }
                    if (pa.isRegularFile() && links(p) > 1) {
                        throw new PolicyViolationException("protected metadata '" + display(p.toString(), workspace)
                                + "' has another hard link, through which a program could change it. Nothing ran; "
                                + "remove the other link (for a repository: git repack -a -d, or a fresh clone)");
                    }
                    if (pa.isSymbolicLink() && leadsInto(p, writable, root)) {
                        throw new PolicyViolationException("protected metadata '" + display(p.toString(), workspace)
                                + "' is a symbolic link into a writable directory, through which a program could "
                                + "change it. Nothing ran; remove the link");
                    }
                });
            } catch (IOException | java.io.UncheckedIOException ex) {
                throw new PolicyViolationException("cannot verify protected metadata '" + display(path, workspace)
                        + "': " + ex.getClass().getSimpleName());
            }
            if (VERIFIED.size() > MAX_VERIFIED) {
                VERIFIED.clear();
            }
            VERIFIED.add(key);
        });
    }

    /** True when the link {@code link} (inside {@code tree}) points outside the tree, into a writable root. */
    private static boolean leadsInto(Path link, List<String> writable, Path tree) {
        Path target;
        try {
            target = link.getParent().resolve(Files.readSymbolicLink(link)).normalize();
        } catch (IOException e) {
            return false;
        }
        if (target.startsWith(tree)) {
            return false;
        }
        String t = target.toString();
        String r = real(target);
        for (String w : writable) {
            if (isAtOrBelow(t, w) || r != null && isAtOrBelow(r, w)) {
                return true;
            }
        }
        return false;
    }

    private static int links(Path p) {
        try {
            return (Integer) Files.getAttribute(p, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return 1;
        }
    }

    static boolean isEmptyDirectory(Path dir) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            return !s.iterator().hasNext();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * When programs run as the unprivileged sandbox user, bubblewrap (as that user) must reach every grant and the
     * program must be able to use it: a grant it could not use is refused with the reason, not run half-working.
     */
    private static void checkUsable(Map<String, Entry> entries, Path workspace, SandboxUser user) {
        if (!user.drops()) {
            return;
        }
        String ws = workspace.toString();
        entries.forEach((path, e) -> {
            if (e.rule == null || !(e.kind == Mount.Kind.RO_BIND || e.kind == Mount.Kind.BIND)
                    || path.equals("/") || isAtOrBelow(path, ws)) {
                return;
            }
            Path p = Path.of(path);
            Path blocked = user.firstUnsearchable(p.getParent() == null ? p : p.getParent());
            boolean ok = blocked == null && (e.kind == Mount.Kind.BIND ? user.canWrite(p) && user.canRead(p)
                    : user.canRead(p));
            if (!ok) {
                String what = e.kind == Mount.Kind.BIND ? "write" : "read";
                throw new InvalidSpecException(what + " grant '" + e.rule + "' is not " + what + "able by the "
                        + "sandbox user (uid " + user.uid() + "), as which programs run (never as root)"
                        + (blocked == null ? "" : ": '" + blocked + "' is not searchable by it")
                        + "; give that user access (owner, group " + user.gid() + " or others), or grant another "
                        + "path");
            }
        });
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
                    String glob = matches(dir);
                    if (glob != null) {
                        put(entries, dir.toString(), Entry.none(true, glob));
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    count();
                    String glob = attrs.isSymbolicLink() ? null : matches(file);
                    if (glob != null) {
                        put(entries, file.toString(), Entry.none(false, glob));
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

                private String matches(Path p) {
                    String rel = workspace.relativize(p).toString();
                    for (int i = 0; i < globs.size(); i++) {
                        if (globs.get(i).matches(rel)) {
                            return profile.noAccessGlobs().get(i);
                        }
                    }
                    return null;
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
        Mount.Kind kind;
        /** The rule that produced the entry, as written (for messages), or null. */
        final String rule;
        int fd = -1;
        String source;

        Entry(Mount.Kind kind, String rule) {
            this.kind = kind;
            this.rule = rule;
        }

        static Entry none(boolean dir, String rule) {
            return new Entry(dir ? Mount.Kind.HIDE_DIR : Mount.Kind.HIDE_FILE, rule);
        }

        static Entry grant(FileAccess access, String rule) {
            return new Entry(access == FileAccess.WRITE ? Mount.Kind.BIND : Mount.Kind.RO_BIND, rule);
        }
    }

    /** The host's mount table: mount points and their file system types. */
    static final class HostMounts {
        private HostMounts() {
        }

        /** Each mount as {mount point, fstype}, from /proc/self/mountinfo; empty when it cannot be read. */
        static List<String[]> read() {
            List<String[]> out = new ArrayList<>();
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                    int dash = line.indexOf(" - ");
                    if (dash < 0) {
                        continue;
                    }
                    String[] pre = line.substring(0, dash).split(" ");
                    String[] post = line.substring(dash + 3).split(" ");
                    if (pre.length >= 5 && post.length >= 1) {
                        out.add(new String[]{unescape(pre[4]), post[0]});
                    }
                }
            } catch (IOException | RuntimeException ignored) {
                // No mount table: nothing known to remount.
            }
            return out;
        }

        private static String unescape(String s) {
            return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\");
        }
    }
}
