package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The one rule for protected metadata (such as {@code .git}): it is read-only wherever it appears in a writable
 * directory of a run. At the top of a writable root, an existing name is protected and a missing one is occupied by an
 * empty read-only placeholder, so that no program can create it (unless the profile allows it); below the top, every
 * entry with a protected name that exists when a run is planned is protected (found by a {@link ProtectedNameScanner},
 * which lists only what changed since the last run), so what a program creates below the top is protected from the
 * next run on. A {@code .git} file protects the directory it points git at. A write grant reaching into protected
 * metadata is refused, and so is a protected tree with another name a program could write through (a hard link, a
 * link into a writable directory), since that name would keep it writable; a verified tree is remembered by identity,
 * because only a host process can change it afterwards. One exception, asked for by the profile
 * ({@link PermissionProfile#withNestedMetadataWrites}): what programs created below the root of their own workspace
 * stays theirs.
 */
final class ProtectedMetadata {

    private ProtectedMetadata() {
    }

    /**
     * Refuses a write the model asks for (its file tools) at {@code rel} where no program of the workspace could write:
     * into protected metadata at the top of the workspace (existing, or missing where the profile does not let
     * programs create it), into protected metadata below the top that exists now (unless the profile leaves programs
     * their own there; what the application staged stays protected), and into a directory staged read-only. What a
     * program could create (a {@code .git} below the top that does not exist yet) the model may write too.
     *
     * @param root     the workspace root
     * @param rel      the normalised workspace-relative path to be written
     * @param readOnly workspace-relative paths every run mounts read-only (read-only stages, staged metadata)
     * @throws PolicyViolationException naming the rule
     */
    static void refuseModelWrite(PermissionProfile profile, Path root, String rel, Set<String> readOnly) {
        for (String r : readOnly) {
            if (rel.equals(r) || rel.startsWith(r + "/")) {
                throw new PolicyViolationException("'" + rel + "' lies in '" + r + "', which is read-only for "
                        + "programs (staged read-only or protected metadata), so the file tools may not write it "
                        + "either");
            }
        }
        List<String> names = profile.protectedMetadata();
        String[] parts = rel.split("/");
        StringBuilder prefix = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            prefix.append(i == 0 ? "" : "/").append(parts[i]);
            if (!names.contains(parts[i])) {
                continue;
            }
            boolean exists = Files.exists(root.resolve(prefix.toString()), LinkOption.NOFOLLOW_LINKS);
            boolean refused = i == 0 ? exists || !profile.allowsProtectedMetadataCreation()
                    : exists && !profile.allowsNestedMetadataWrites();
            if (refused) {
                throw new PolicyViolationException("'" + prefix + "' is protected metadata, which programs in the "
                        + "sandbox cannot write (" + (i == 0 ? "at the top of the workspace" : "an existing "
                        + parts[i] + " below the top") + "), so the file tools may not write it either; write "
                        + "elsewhere, such as work/...");
            }
        }
    }

    /**
     * Protected trees verified free of hard links and escaping links, by path and identity (see
     * {@link #verifyProtectedTrees}).
     */
    private static final Set<String> VERIFIED = ConcurrentHashMap.newKeySet();
    private static final int MAX_VERIFIED = 4096;

    /**
     * Protected metadata: at the top of every writable root (existing: read-only; missing, or an empty directory left
     * by an interrupted run: an empty read-only placeholder, unless the profile allows creating it), below the top of
     * every writable root wherever it exists now (unless the profile leaves programs their own below the workspace
     * root), where the application staged it (read rules of the workspace whose path ends in a protected name), and
     * the directories {@code .git} files point at inside writable roots. A write grant reaching into protected
     * metadata is refused.
     *
     * @param sandboxRoot   the engine's root (its other workspaces are never scanned)
     * @param hostWorkspace true when the workspace is a host directory (whose repositories are the host's), not one
     *                      of the engine's
     * @param scanner       finds the entries below the tops of the writable roots
     */
    static void protect(PermissionProfile profile, Map<String, LayoutEntry> entries, Path workspace, Path sandboxRoot,
                        boolean hostWorkspace, List<String> placeholders, ProtectedNameScanner scanner) {
        List<String> names = profile.protectedMetadata();
        List<String> writeRoots = LayoutEntry.writableRoots(entries);
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
                LayoutEntry existing = entries.get(key);
                if (existing != null) {
                    if (existing.kind == Mount.Kind.BIND) {
                        throw new InvalidSpecException("write grant '" + existing.rule + "' is protected metadata '"
                                + name + "' of a writable directory, which stays read-only; grant a path outside it");
                    }
                    continue;
                }
                BasicFileAttributes a = LayoutPaths.attributes(p);
                if (a != null && a.isSymbolicLink()) {
                    throw new PolicyViolationException("protected metadata '" + name + "' in a writable root is a "
                            + "symbolic link; refusing to run (remove the link, it may have been planted)");
                }
                if (a == null || a.isDirectory() && LayoutPaths.isEmptyDirectory(p)) {
                    if (!profile.allowsProtectedMetadataCreation()) {
                        // Occupied for the run by an empty read-only directory: no program can create it here.
                        entries.put(key, new LayoutEntry(Mount.Kind.PLACEHOLDER, name));
                        placeholders.add(key);
                    }
                    continue;
                }
                // Directory or file, it is pinned like every bind inside a writable root (see LayoutPinning.pin).
                entries.put(key, new LayoutEntry(Mount.Kind.PROTECT, name));
            }
        }
        // Below the top of every writable root, wherever it appears (found by a scan that lists only what changed).
        for (String root : writeRoots) {
            boolean inWorkspace = LayoutPaths.isAtOrBelow(root, workspace.toString());
            if (!inWorkspace && LayoutPaths.isAtOrBelow(root, sandboxRoot.toString())) {
                continue; // another workspace or the engine's state: refused below (LayoutChecks), never scanned
            }
            if (inWorkspace && !hostWorkspace && profile.allowsNestedMetadataWrites()) {
                continue; // the programs' own repositories stay theirs (PermissionProfile#withNestedMetadataWrites)
            }
            protectNested(Path.of(root), names, entries, scanner, workspace);
        }
        protectGitdirTargets(entries, workspace);
        // No writable bind at or below protected metadata: it would make it writable again.
        Map<String, LayoutEntry> snapshot = new LinkedHashMap<>(entries);
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

    /**
     * Protects every entry with a protected name below the top of the writable root {@code root}: a directory or a
     * file becomes read-only; a link is refused, since what it leads to cannot be made read-only by its name. Entries
     * the plan already covers (staged metadata, hidden paths) keep their rule; subtrees that are not writable, and
     * writable roots nested in this one (scanned on their own), are not entered.
     */
    private static void protectNested(Path root, List<String> names, Map<String, LayoutEntry> entries,
                                      ProtectedNameScanner scanner, Path workspace) {
        String top = root.toString();
        List<ProtectedNameScanner.Found> found = scanner.find(root, names, dir -> {
            LayoutEntry e = entries.get(dir);
            return e != null && (!e.kind.isWritable() || e.kind == Mount.Kind.BIND && !dir.equals(top));
        });
        for (ProtectedNameScanner.Found f : found) {
            if (top.equals(LayoutPaths.parent(f.path())) || entries.containsKey(f.path())) {
                continue; // the top of the root has its own rule (placeholders); a rule that covers it stands
            }
            if (f.type() == ProtectedNameScanner.Type.LINK) {
                throw new PolicyViolationException("protected metadata '" + LayoutPaths.display(f.path(), workspace)
                        + "' inside a writable directory is a symbolic link; refusing to run (remove the link, it may "
                        + "have been planted)");
            }
            // A directory, a file, or something else (a FIFO): pinning refuses what cannot be mounted read-only.
            entries.put(f.path(), new LayoutEntry(Mount.Kind.PROTECT, Path.of(f.path()).getFileName().toString()));
        }
    }

    /** Longest {@code .git} file read for its {@code gitdir:} line (a path, so PATH_MAX and a prefix). */
    private static final int MAX_GITFILE_BYTES = 4200;

    /**
     * A {@code .git} <em>file</em> (a worktree's or submodule's "gitdir: &lt;path&gt;" pointer) is protected like the
     * directory it names: git uses that directory as the repository, hooks and configuration included. When the
     * directory lies in a writable root of this run, it is protected too (from the first run that finds the pointer);
     * elsewhere it is the host's, and read-only or hidden already. A pointer through a link inside a writable root, or
     * at a writable root itself, is refused: neither can be made read-only.
     */
    private static void protectGitdirTargets(Map<String, LayoutEntry> entries, Path workspace) {
        List<String> writable = LayoutEntry.writableRoots(entries);
        Map<String, String> targets = new LinkedHashMap<>();
        entries.forEach((path, e) -> {
            Path p = Path.of(path);
            if (e.kind != Mount.Kind.PROTECT || p.getFileName() == null || !p.getFileName().toString().equals(".git")) {
                return;
            }
            BasicFileAttributes a = LayoutPaths.attributes(p);
            if (a == null || !a.isRegularFile()) {
                return;
            }
            String target = gitdir(p);
            if (target != null) {
                targets.put(target, path);
            }
        });
        targets.forEach((target, gitFile) -> {
            String root = null;
            for (String w : writable) {
                if (LayoutPaths.isAtOrBelow(target, w) && (root == null || w.length() > root.length())) {
                    root = w;
                }
            }
            if (root == null) {
                return; // outside every writable root: the host's, read-only or hidden already
            }
            String shown = LayoutPaths.display(gitFile, workspace);
            for (String w : writable) {
                if (LayoutPaths.isAtOrBelow(w, target)) {
                    throw new PolicyViolationException("protected metadata '" + shown + "' points git at a "
                            + "directory that is (or holds) a writable directory of this run, which cannot be made "
                            + "read-only; refusing to run (remove or correct the .git file)");
                }
            }
            // Walk down from the root without following links: the pointer names a path, not a link's target.
            Path cur = Path.of(root);
            for (Path part : Path.of(root).relativize(Path.of(target))) {
                cur = cur.resolve(part);
                BasicFileAttributes a = LayoutPaths.attributes(cur);
                if (a == null) {
                    return; // not there (yet): protected from the run that finds it
                }
                if (a.isSymbolicLink()) {
                    throw new PolicyViolationException("protected metadata '" + shown + "' points git through a "
                            + "symbolic link inside a writable directory; refusing to run (remove the link or the "
                            + ".git file)");
                }
                LayoutEntry e = entries.get(cur.toString());
                if (e != null && !e.kind.isWritable()) {
                    return; // inside something read-only, hidden or protected already (.git/worktrees/x)
                }
            }
            if (Files.isDirectory(cur, LinkOption.NOFOLLOW_LINKS)) {
                entries.put(cur.toString(), new LayoutEntry(Mount.Kind.PROTECT, ".git"));
            }
        });
    }

    /** The normalised absolute directory a {@code .git} file points at, or null when it is no gitdir pointer. */
    private static String gitdir(Path gitFile) {
        byte[] head;
        try (java.io.InputStream in = Files.newInputStream(gitFile, LinkOption.NOFOLLOW_LINKS)) {
            head = in.readNBytes(MAX_GITFILE_BYTES);
        } catch (IOException e) {
            return null;
        }
        String text = new String(head, java.nio.charset.StandardCharsets.UTF_8);
        int nl = text.indexOf('\n');
        String line = (nl < 0 ? text : text.substring(0, nl)).strip();
        if (!line.startsWith("gitdir:")) {
            return null; // git refuses such a file ("invalid gitfile format"): no repository behind it
        }
        String dir = line.substring("gitdir:".length()).strip();
        if (dir.isEmpty() || dir.indexOf('\0') >= 0) {
            return null;
        }
        try {
            return gitFile.getParent().resolve(dir).normalize().toString();
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    /**
     * Protected metadata must have no other name a program could write through: no regular file in it with another
     * hard link, and no symbolic link in it that leads into a writable directory. Only a program that could write the
     * tree before it was protected can have made such a name, so a tree is verified once per identity (a host process
     * that changes it is trusted).
     */
    static void verifyProtectedTrees(Map<String, LayoutEntry> entries, Path workspace) {
        List<String> writable = LayoutEntry.writableRoots(entries);
        entries.forEach((path, e) -> {
            if (e.kind != Mount.Kind.PROTECT) {
                return;
            }
            Path root = Path.of(path);
            BasicFileAttributes a = LayoutPaths.attributes(root);
            if (a == null || a.isSymbolicLink()) {
                return; // vanished or swapped: LayoutPinning.pin() refuses it
            }
            String key = path + "\0" + a.fileKey();
            if (VERIFIED.contains(key)) {
                return;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                walk.forEach(p -> {
                    BasicFileAttributes pa = LayoutPaths.attributes(p);
                    if (pa == null) {
                        return;
                    }
                    if (pa.isRegularFile() && LayoutPaths.links(p) > 1) {
                        throw new PolicyViolationException("protected metadata '"
                                + LayoutPaths.display(p.toString(), workspace)
                                + "' has another hard link, through which a program could change it. Nothing ran; "
                                + "remove the other link (for a repository: git repack -a -d, or a fresh clone)");
                    }
                    if (pa.isSymbolicLink() && leadsInto(p, writable, root)) {
                        throw new PolicyViolationException("protected metadata '"
                                + LayoutPaths.display(p.toString(), workspace)
                                + "' is a symbolic link into a writable directory, through which a program could "
                                + "change it. Nothing ran; remove the link");
                    }
                });
            } catch (IOException | java.io.UncheckedIOException ex) {
                throw new PolicyViolationException("cannot verify protected metadata '"
                        + LayoutPaths.display(path, workspace)
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
        String r = LayoutPaths.real(target);
        for (String w : writable) {
            if (LayoutPaths.isAtOrBelow(t, w) || r != null && LayoutPaths.isAtOrBelow(r, w)) {
                return true;
            }
        }
        return false;
    }
}
