package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Keeps protected metadata (such as {@code .git}) read-only in every writable directory of a run: existing names at
 * the top of a writable root are protected, missing ones are occupied by an empty read-only placeholder so that no
 * program can create them (unless the profile allows it), nested ones inside host directories granted writable are
 * found by a walk, and a write grant reaching into protected metadata is refused. A protected tree with another name
 * a program could write through (a hard link, a link into a writable directory) is refused, since that name would
 * keep it writable; a verified tree is remembered by identity, because only a host process can change it afterwards.
 */
final class ProtectedMetadata {

    private ProtectedMetadata() {
    }

    /**
     * Protected trees verified free of hard links and escaping links, by path and identity (see
     * {@link #verifyProtectedTrees}).
     */
    private static final Set<String> VERIFIED = ConcurrentHashMap.newKeySet();
    private static final int MAX_VERIFIED = 4096;

    /**
     * Protected metadata: at the top of every writable root (existing: read-only; missing, or an empty directory left
     * by an interrupted run: an empty read-only placeholder, unless the profile allows creating it), below the roots
     * where the workspace or a write grant is a host directory (found by a walk), and where the application staged it
     * (read rules of the workspace whose path ends in a protected name). A write grant reaching into protected
     * metadata is refused.
     */
    static void protect(PermissionProfile profile, Map<String, LayoutEntry> entries, Path workspace,
                                Path sandboxRoot, boolean hostWorkspace, List<String> placeholders) {
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
        // Below the roots of host directories a sandbox can write: every repository there is the host's.
        for (String root : writeRoots) {
            boolean engineWorkspace = root.equals(workspace.toString()) && !hostWorkspace;
            if (engineWorkspace || LayoutPaths.isAtOrBelow(root, sandboxRoot.toString()) && !hostWorkspace) {
                continue;
            }
            findNestedProtected(Path.of(root), names, entries);
        }
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

    /** Walks a host directory granted writable for protected names below its top, without following links. */
    private static void findNestedProtected(Path root, List<String> names, Map<String, LayoutEntry> entries) {
        int[] seen = {0};
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    if (dir.equals(root)) {
                        return FileVisitResult.CONTINUE;
                    }
                    count();
                    LayoutEntry e = entries.get(dir.toString());
                    if (e != null && !e.kind.isWritable()) {
                        return FileVisitResult.SKIP_SUBTREE; // hidden, protected or read-only already
                    }
                    if (names.contains(dir.getFileName().toString()) && !dir.getParent().equals(root)) {
                        entries.put(dir.toString(), new LayoutEntry(Mount.Kind.PROTECT, dir.getFileName().toString()));
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
                            entries.put(file.toString(), new LayoutEntry(Mount.Kind.PROTECT, file.getFileName()
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
                    if (++seen[0] > SandboxLayout.MAX_GLOB_WALK) {
                        throw new PolicyViolationException("a writable host directory holds more than "
                                + SandboxLayout.MAX_GLOB_WALK + " entries; refusing to run because its repositories' "
                                + "metadata cannot all be found and protected; grant a smaller directory");
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
