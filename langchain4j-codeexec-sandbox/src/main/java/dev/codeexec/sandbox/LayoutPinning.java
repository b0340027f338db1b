package dev.codeexec.sandbox;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Keeps what a plan names where the plan found it until bubblewrap mounts it. Directories between a writable root
 * and something a rule names there are held in place (a {@link Mount.Kind#KEEP} mount point no program can rename or
 * remove), so one run cannot move a hidden or protected path to a name no rule covers for the next. Binds inside a
 * writable directory, where a program running at the same time could swap a name for a link, are pinned: a
 * directory becomes a descriptor the launcher opens and verifies, a file a hard link in a private directory. Inside
 * the workspace, where nothing else runs while a run is set up, directories held in place and protected directories
 * below its top are bound by name and checked by the launcher instead (they can be many; descriptors are few).
 */
final class LayoutPinning {

    private LayoutPinning() {
    }

    /**
     * Holds in place every directory between a writable bind and an entry inside it that a rule names (hidden,
     * protected, read-only, placeholder, kernel remount): each becomes a {@link Mount.Kind#KEEP} bind, a mount point a
     * program can neither rename nor remove. Without it, a program could rename a parent and move the named thing to
     * a name no rule covers for the next run.
     */
    static void holdInPlace(Map<String, LayoutEntry> entries) {
        List<String> paths = new ArrayList<>(entries.keySet());
        Set<String> all = new java.util.HashSet<>(paths);
        for (String path : paths) {
            LayoutEntry e = entries.get(path);
            if (e.kind == Mount.Kind.BIND || e.kind == Mount.Kind.SCRATCH || path.equals("/")) {
                continue;
            }
            String enclosing = null;
            for (String q = LayoutPaths.parent(path); q != null; q = LayoutPaths.parent(q)) {
                if (all.contains(q)) {
                    enclosing = q;
                    break;
                }
            }
            if (enclosing == null || !entries.get(enclosing).kind.isWritable()) {
                continue;
            }
            for (String q = LayoutPaths.parent(path); q != null && !q.equals(enclosing); q = LayoutPaths.parent(q)) {
                if (!entries.containsKey(q)) {
                    entries.put(q, new LayoutEntry(Mount.Kind.KEEP, e.rule));
                    all.add(q);
                }
            }
        }
    }

    /**
     * Pins every bind that lies strictly inside the workspace or a write grant (see {@link SandboxLayout#plan});
     * files become hard links in {@code pinDir}, or on the workspace's volume ({@code volumePins}, when not null) for
     * files inside the workspace; returns the directories to open as descriptors, in descriptor order, and adds to {@code checked} the
     * directories held in place inside the workspace (bound by name, checked by the launcher). The workspace root
     * itself is bound by name: its parent belongs to the engine and no sandbox can see it, let alone change it.
     */
    static List<String> pin(Map<String, LayoutEntry> entries, Path workspace, Path pinDir,
                            LoopVolumes.VolumePins volumePins, List<String> checked) {
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
            LayoutEntry e = entries.get(path);
            if (!e.kind.isBind() || changeable.stream().noneMatch(r -> path.startsWith(r + "/"))) {
                continue;
            }
            String shown = LayoutPaths.display(path, workspace);
            BasicFileAttributes a = LayoutPaths.attributes(Path.of(path));
            if (a == null) {
                throw new PolicyViolationException("'" + shown + "' vanished while the sandbox was planned; "
                        + "nothing ran (a program running in the same workspace may be changing it)");
            }
            boolean nestedRepository = e.kind == Mount.Kind.PROTECT && !ws.equals(LayoutPaths.parent(path));
            if ((e.kind == Mount.Kind.KEEP || nestedRepository) && a.isDirectory() && path.startsWith(ws + "/")) {
                // Inside the workspace only: no other program can change it before the mount (one per workspace).
                // Protected directories below the top are bound this way too: there can be any number of them (a
                // repository per project), while the descriptors are few; those at the top keep their descriptor.
                checked.add(path);
                continue;
            }
            if (a.isDirectory()) {
                if (SandboxLayout.FIRST_PINNED_FD + dirs.size() > SandboxLayout.LAST_PINNED_FD) {
                    throw new PolicyViolationException("more than "
                            + (SandboxLayout.LAST_PINNED_FD - SandboxLayout.FIRST_PINNED_FD + 1)
                            + " read-only or protected directories lie inside writable directories of this run "
                            + "(read-only stages, grants, .git, and the directories that hold hidden or protected "
                            + "paths of write grants in place); the sandbox can pin only that many. Stage fewer "
                            + "read-only directories, or stage them under one directory"
                            + (e.rule == null ? "" : " (rule '" + e.rule + "')"));
                }
                e.fd = SandboxLayout.FIRST_PINNED_FD + dirs.size();
                dirs.add(path);
            } else if (a.isRegularFile() && e.kind != Mount.Kind.KEEP) {
                // A hard link stays on its mount: a file of a workspace on a volume of its own is linked through the
                // volume's mount, into the run's directory there.
                boolean onVolume = volumePins != null && path.startsWith(ws + "/");
                e.source = onVolume
                        ? alias(volumePins.onVolume(Path.of(path)), volumePins.dir().resolve("pin-" + files++), shown)
                        : alias(Path.of(path), pinDir.resolve("pin-" + files++), shown);
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
        BasicFileAttributes a = LayoutPaths.attributes(alias);
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
}
