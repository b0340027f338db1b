package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.workspace.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 *   <li>protected metadata is protected wherever it appears in a writable root, at the top and at any depth below
 *       it (see {@link ProtectedMetadata}); a name that does not exist at the top of a writable root is occupied by an
 *       empty read-only placeholder, so that no program can create it there (unless the profile
 *       {@linkplain PermissionProfile#withProtectedMetadataCreation allows it}), and one created below the top is
 *       protected from the next run on; a protected tree with a file that has another hard link, or a link into a
 *       writable directory, is refused, because that other name would keep it writable;</li>
 *   <li>nothing that lets a program change host-wide kernel state is writable: write grants at or below
 *       {@code /proc}, {@code /sys} or {@code /dev} are refused, and kernel interface file systems mounted inside a
 *       write grant are remounted read-only.</li>
 * </ul>
 *
 * <p>Run per run; what is kept from one run to the next is kept only while what it was derived from is unchanged: the
 * verification of a protected tree (which only a host process can change), the listings of unchanged directories the
 * search for protected metadata remembers ({@link ProtectedNameScanner}: a directory's ctime and identity), and what
 * the host rules resolved to ({@link HostRuleCache}: the ctime and identity of every host directory the resolution
 * looked in). So a secret created on the host after the engine started is still hidden from the next run on.
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
     * @param volumePins   the run's directory of pinned file links on the workspace's own volume, or null; removed
     *                     after the run
     */
    record Plan(List<Mount> mounts, List<String> pinnedDirs, List<String> checkedDirs, List<String> placeholders,
                Path volumePins) {
        Plan {
            mounts = List.copyOf(mounts);
            pinnedDirs = List.copyOf(pinnedDirs);
            checkedDirs = List.copyOf(checkedDirs);
            placeholders = List.copyOf(placeholders);
        }

        Plan(List<Mount> mounts, List<String> pinnedDirs) {
            this(mounts, pinnedDirs, List.of(), List.of(), null);
        }

        /** This plan with {@code extra} operations added. */
        /**
         * The plan with these mounts in place of the ones at their paths that are scratch tmpfs, and added where the
         * plan has none (a path it hides keeps its mask).
         */
        Plan withScratch(List<Mount> scratch) {
            List<Mount> all = new ArrayList<>(mounts);
            for (Mount m : scratch) {
                boolean taken = all.stream().anyMatch(o -> o.path().equals(m.path()) && o.kind() != Mount.Kind.SCRATCH);
                if (!taken) {
                    all.removeIf(o -> o.path().equals(m.path()));
                    all.add(m);
                }
            }
            return new Plan(all, pinnedDirs, checkedDirs, placeholders, volumePins);
        }

        Plan withMounts(List<Mount> extra) {
            if (extra.isEmpty()) {
                return this;
            }
            List<Mount> all = new ArrayList<>(mounts);
            all.addAll(extra);
            return new Plan(all, pinnedDirs, checkedDirs, placeholders, volumePins);
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
         * Creates the placeholders' directories before the launch, as the engine: bubblewrap, running as the sandbox
         * user, could not create them in a workspace whose quota is used up (the engine may write in the blocks the
         * volume reserves for it, see {@link LoopVolumes}). One that exists already, or that cannot be created, is
         * left to bubblewrap, which mounts on it or fails the setup as before.
         */
        void createPlaceholders() {
            for (String p : placeholders) {
                try {
                    Files.createDirectory(Path.of(p)); // never through a link: an existing name is left alone
                } catch (IOException ignored) {
                    // Exists, or no room even for the engine: bubblewrap has the last word.
                }
            }
        }

        /**
         * Removes the placeholders of this run, once the run is over: each only while it is still an empty directory
         * (never a link, never anything a program or the host put there).
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
            if (volumePins != null) {
                FileTrees.deleteTree(volumePins);
            }
        }
    }

    private SandboxLayout() {
    }

    /**
     * {@link #plan(PermissionProfile, Path, Path, List, Path, SandboxUser, ProtectedNameScanner)} for programs of the
     * JVM's own user, with a scanner that remembers nothing.
     */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir) {
        return plan(profile, workspace, sandboxRoot, homes, pinDir, null, null, new ProtectedNameScanner());
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
     * @param volumePins  where the hard links of pinned files inside the workspace go instead when the workspace is a
     *                    volume of its own (a hard link cannot cross file systems): a private directory of this run
     *                    on that volume, outside the workspace; null when it has none
     * @param user        who the program runs as (grants it cannot use are refused); null for the JVM's user
     * @param scanner     finds protected metadata below the top of the writable roots, remembering what it listed
     *                    (one per engine, so that a run lists only what changed since the last)
     * @throws PolicyViolationException when a grant no longer exists, passes through a link inside a writable
     *                                  directory or reaches into the sandbox root, protected metadata is a link, a
     *                                  special file or has another name, a hidden file has another name, or more
     *                                  directories need pinning than the launcher has descriptors for
     * @throws InvalidSpecException     when a grant would make host kernel state writable, or the program's user
     *                                  cannot use a grant
     */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir,
                     LoopVolumes.VolumePins volumePins, SandboxUser user, ProtectedNameScanner scanner) {
        return plan(profile, workspace, sandboxRoot, homes, pinDir, volumePins, user, scanner, null);
    }

    /**
     * {@link #plan(PermissionProfile, Path, Path, List, Path, LoopVolumes.VolumePins, SandboxUser,
     * ProtectedNameScanner)}, reusing what the host rules resolved to from {@code hostRules} while the host
     * directories they were resolved in are unchanged (see {@link HostRuleCache}); null to resolve them afresh.
     */
    static Plan plan(PermissionProfile profile, Path workspace, Path sandboxRoot, List<Path> homes, Path pinDir,
                     LoopVolumes.VolumePins volumePins, SandboxUser user, ProtectedNameScanner scanner,
                     HostRuleCache hostRules) {
        Map<String, LayoutEntry> entries = new LinkedHashMap<>();
        List<String> changeable = new ArrayList<>();
        changeable.add(workspace.toString());
        boolean hostWorkspace = !LayoutPaths.isAtOrBelow(workspace.toString(), sandboxRoot.toString());

        // Write grants first, shallowest first, so that each later rule knows every directory a sandbox can change.
        List<PermissionProfile.PathRule> rules = new ArrayList<>(profile.rules());
        List<PermissionProfile.PathRule> ordered = new ArrayList<>();
        rules.stream().filter(r -> r.access() == FileAccess.WRITE)
                .sorted((a, b) -> Integer.compare(LayoutPaths.depth(a.path()), LayoutPaths.depth(b.path())))
                .forEach(ordered::add);
        rules.stream().filter(r -> r.access() != FileAccess.WRITE).forEach(ordered::add);
        // Host rules resolve to the same entries while the host directories they were resolved in are unchanged.
        boolean cacheable = hostRules != null && !hostWorkspace && rules.stream()
                .noneMatch(r -> isHostRule(r) && r.access() == FileAccess.WRITE);
        Object key = cacheable ? List.of(rules.stream().filter(SandboxLayout::isHostRule).toList(), homes) : null;
        List<HostRuleCache.Resolved> cached = cacheable ? hostRules.lookup(key) : null;
        HostRuleCache.Recorder recorder = cacheable && cached == null ? hostRules.record() : null;
        Map<String, LayoutEntry> hostEntries = cacheable ? new LinkedHashMap<>() : entries;
        for (PermissionProfile.PathRule rule : ordered) {
            if (cached != null && isHostRule(rule)) {
                continue;
            }
            if (rule.isHomePath()) {
                for (Path home : homes) {
                    if (RulePaths.hiddenByHostRule(profile, home)) {
                        continue; // already hidden as a whole (/root): nothing below it needs its own mount
                    }
                    RulePaths.hostPath(home.resolve(rule.path().substring(2)).toString(), rule.access(), rule.path(),
                            hostEntries, changeable, recorder);
                }
            } else if (rule.isHostPath()) {
                RulePaths.hostPath(rule.path(), rule.access(), rule.path(), hostEntries, changeable, recorder);
            } else {
                RulePaths.workspacePath(workspace, rule.path(), rule.access(), entries);
            }
            if (rule.access() == FileAccess.WRITE) {
                entries.forEach((p, e) -> {
                    if (e.kind == Mount.Kind.BIND && !changeable.contains(p)) {
                        changeable.add(p);
                    }
                });
            }
        }
        if (cacheable) {
            if (cached == null) {
                cached = HostRuleCache.of(hostEntries);
                hostRules.store(key, recorder, cached, sandboxRoot);
            }
            // Fresh entries every run: later steps change them (pinning), never the cached values.
            cached.forEach(r -> LayoutEntry.put(entries, r.path(), new LayoutEntry(r.kind(), r.rule())));
        }
        LayoutEntry.put(entries, sandboxRoot.toString(),
                LayoutEntry.none(Files.isDirectory(sandboxRoot), "the sandbox root"));
        for (String s : SCRATCH_DIRS) {
            Path p = Path.of(s);
            if (Files.isDirectory(p)) {
                String real = LayoutPaths.real(p);
                if (real != null && !entries.containsKey(real)) {
                    entries.put(real, new LayoutEntry(Mount.Kind.SCRATCH, null));
                }
            }
        }
        if (profile.network() == NetworkMode.ENABLED) {
            // With the network on, name resolution must keep working where /etc/resolv.conf links into the hidden
            // /run (systemd-resolved, resolvconf): the one file it points at is shown read-only.
            Path resolv = Path.of("/etc/resolv.conf");
            if (Files.isSymbolicLink(resolv) && LayoutPaths.present(resolv)) {
                String real = LayoutPaths.real(resolv);
                if (real != null && !real.equals(resolv.toString()) && !entries.containsKey(real)) {
                    entries.put(real, new LayoutEntry(Mount.Kind.RO_BIND, null));
                }
            }
        }
        KernelGuards.refuseWritableKernelTrees(entries);
        List<String> placeholders = new ArrayList<>();
        ProtectedMetadata.protect(profile, entries, workspace, sandboxRoot, hostWorkspace, placeholders, scanner);
        if (!profile.noAccessGlobs().isEmpty()) {
            RulePaths.hideGlobMatches(profile, workspace, entries);
        }
        entries.keySet().removeIf(path -> path.equals("/proc") || path.startsWith("/proc/") || path.equals("/dev")
                || path.startsWith("/dev/"));
        LayoutChecks.keepOutOfSandboxRoot(entries, workspace, sandboxRoot);
        KernelGuards.remountKernelFileSystems(entries, sandboxRoot);
        LayoutChecks.refuseHiddenFilesWithOtherNames(entries);
        LayoutPinning.holdInPlace(entries);
        ProtectedMetadata.verifyProtectedTrees(entries, workspace);
        if (user != null) {
            LayoutChecks.checkUsable(entries, workspace, user);
        }
        List<String> checked = new ArrayList<>();
        List<String> pinnedDirs = pinDir == null ? List.of()
                : LayoutPinning.pin(entries, workspace, pinDir, volumePins, checked);
        List<Mount> mounts = new ArrayList<>();
        entries.forEach((path, e) -> mounts.add(new Mount(path, e.kind, e.fd, e.source)));
        return new Plan(prune(mounts), pinnedDirs, checked, placeholders,
                pinDir == null || volumePins == null ? null : volumePins.dir());
    }

    /** True for a rule of a host path or of a path in every home directory (not of the workspace). */
    private static boolean isHostRule(PermissionProfile.PathRule r) {
        return r.isHostPath() || r.isHomePath();
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
     * Home directories for {@code ~/} rules: {@code /root}, every directory under {@code /home}, and the home of every
     * {@code /etc/passwd} entry that exists (system accounts whose home is {@code /} or a system directory are
     * skipped); see {@link HomeDirectories}.
     */
    static List<Path> homeDirectories() {
        return HomeDirectories.find();
    }
}
