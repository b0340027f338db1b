package dev.codeexec.workspace.spi;

import static dev.codeexec.workspace.spi.RelativePaths.join;
import static dev.codeexec.workspace.spi.RelativePaths.nameOf;
import static dev.codeexec.workspace.spi.RelativePaths.parentOf;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The base of a {@link WorkspaceFiles} whose workspace lives on another machine or in another file system root (a
 * container, a cloud sandbox, a pod): it holds the path rules and the link-resolving walk of the contract, and a
 * backend supplies only its transport: {@link #lstat}, {@link #list}, {@link #readFile}, {@link #exportFile},
 * {@link #makeDirs}, {@link #writeFiles}, {@link #remove} and {@link #importInto}. It is a template method in the
 * style of {@link dev.codeexec.spi.AbstractEngine}: every public operation is final and written here, and calls the
 * backend with paths it has already checked and resolved.
 *
 * <p><b>What the base does.</b>
 * <ul>
 *   <li>Checks each path once per instance ({@link RelativePaths#check}: no absolute path, no {@code ..}, no empty
 *       or {@code .} segment, no NUL), whoever called; paths it produced itself (resolved paths, parents of checked
 *       paths) are not checked again.</li>
 *   <li>Resolves a path one component at a time from {@link #lstat}: a link is followed only when the remote side
 *       reports a target inside the workspace ({@link #root()}) that exists and is not itself a link; one that leads
 *       outside or does not resolve is refused with {@link dev.codeexec.engine.PathEscapeException}. Nothing is
 *       read, written, listed or deleted through a link that leaves the workspace.</li>
 *   <li>Creates missing parents one component at a time, each checked, so that a link planted in between cannot
 *       redirect a write; refuses a component that is not a directory.</li>
 *   <li>Remembers the directories it found real for the rest of one operation (an instance belongs to one operation
 *       of the core) and forgets them after it changed the workspace ({@link #forget}).</li>
 *   <li>Tells a workspace that is gone ({@link #workspaceGone}) from a path that is missing: when the first
 *       component of a path, or the parent of a stat, is missing it looks at the root.</li>
 *   <li>Applies {@link WalkVisitor}'s actions ({@link WalkAction#SKIP_SUBTREE}, {@link WalkAction#STOP}) to the
 *       entries {@link #list} reports.</li>
 * </ul>
 *
 * <p><b>What a backend supplies.</b> Every abstract method receives workspace-relative paths that are normalised,
 * checked and resolved (no link among their parents, as far as the remote side said a moment ago), and
 * {@link #abs} turns one into the remote absolute path. A backend maps its transport's failures to the library's
 * typed exceptions (see {@link WorkspaceFiles}) and names workspace-relative paths only in messages. Between the
 * base's check and the backend's call a program of the same workspace could swap a directory for a link: a backend
 * states in its Javadoc what such a race can reach (a container's own root, a sandbox's own VM), and reads through a
 * step that cannot be redirected where it can (a program that checks and reads in one step).
 *
 * <p>A backend proves itself by extending {@code dev.codeexec.tck.WorkspaceFilesContractTest} of the TCK module ({@code langchain4j-codeexec-tck}), as the
 * container and E2B backends do. An instance is used by one thread at a time.
 */
public abstract class RemoteWorkspaceFiles implements WorkspaceFiles {

    private final String root;
    private final LinkWalk links = new LinkWalk(this);

    /**
     * @param root the workspace's absolute path on the remote side, without links in it and without a trailing
     *             {@code /}; link targets are compared with it
     */
    protected RemoteWorkspaceFiles(String root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    // ------------------------------------------------------------------ what a backend supplies

    /** Receives the entries of {@link #list}, each relative to the listed directory. */
    @FunctionalInterface
    protected interface ListVisitor {

        /** @return false to stop the listing (no more is fetched where the transport allows) */
        boolean entry(String rel, RemoteEntry entry);
    }

    /**
     * A file of a {@link #writeFiles} batch.
     *
     * @param file   the file as asked (its path as given)
     * @param parent the resolved, existing parent directory
     * @param target the resolved path to write: {@code parent} joined with the file's name (a link there is
     *               replaced, never written through)
     */
    protected record WriteTarget(PutFile file, String parent, String target) {
    }

    /**
     * The entry at {@code rel} itself, never following a link at it; empty when nothing is there (also when a parent
     * is not a directory). The parents of {@code rel} hold no links. May be remembered until {@link #forget}.
     */
    protected abstract Optional<RemoteEntry> lstat(String rel);

    /**
     * Reports the tree below the real directory {@code dir} depth first in pre-order (a directory before what it
     * contains; order among siblings is free), links as links and never descended, without {@code dir} itself.
     * Entries the transport cannot describe are left out; a directory that vanished yields nothing.
     */
    protected abstract void list(String dir, ListVisitor visitor);

    /**
     * Reads a window of the regular file {@code path} (checked, not yet resolved; offset and length not negative).
     * A backend whose read cannot be redirected resolves in the remote side; others call {@link #regularFile}
     * first. See {@link WorkspaceFiles#read}.
     */
    protected abstract FileWindow readFile(String path, long offset, int maxBytes);

    /**
     * Lends the content of regular file {@code path} (checked, not yet resolved, as for {@link #readFile}) to the
     * visitor and closes it afterwards.
     *
     * @return what the visitor returned: false to stop the export
     */
    protected abstract boolean exportFile(String path, ExportVisitor visitor);

    /**
     * Creates the directories {@code names} under the real directory {@code dir}, in order, each below the one
     * before ({@code x}, {@code x/y}, ...), with the backend's default mode and owned by the workspace's user.
     *
     * @param asked the path as the caller gave it, for messages
     */
    protected abstract void makeDirs(String dir, List<String> names, String asked);

    /**
     * Writes a batch of files, each atomically (a temporary name from {@link #WRITE_TEMP_PREFIX}, then a rename),
     * in one request where the transport can. Parents exist; a target that is a directory is refused with
     * {@link InvalidSpecException} ({@code "'<path>' is a directory"}).
     */
    protected abstract void writeFiles(List<WriteTarget> targets);

    /**
     * Deletes the existing entry {@code target} without following links: a link itself, or a directory tree with
     * the links inside it, and read-only directories in it.
     *
     * @param asked the path as the caller gave it, for messages
     */
    protected abstract void remove(String target, String asked);

    /**
     * Imports a tree as {@link WorkspaceFiles#importTree} describes, under a temporary sibling
     * ({@link #IMPORT_TEMP_PREFIX}) in the real directory {@code parent}, then moved onto {@code target}.
     *
     * @param to the path as the caller gave it, for messages
     */
    protected abstract void importInto(ImportSource source, String parent, String target, String to,
                                       boolean readOnly);

    /** The exception for a workspace whose root is gone; a backend names where it was (a sandbox id). */
    protected RuntimeException workspaceGone() {
        return new WorkspaceGoneException("the workspace is gone");
    }

    /**
     * Forgets what this instance learnt of the remote side, after it changed it. A backend that remembers answers of
     * {@link #lstat} overrides this to forget them too, and calls {@code super.forget()}.
     */
    protected void forget() {
        links.forget();
    }

    // ------------------------------------------------------------------ helpers for a backend

    /** The workspace's absolute path on the remote side. */
    protected final String root() {
        return root;
    }

    /** The remote absolute path of a workspace-relative path. */
    protected final String abs(String rel) {
        return rel.equals(".") ? root : root + "/" + rel;
    }

    /** The workspace-relative path of a remote absolute path, or null when it is outside the workspace. */
    protected final String inside(String absolute) {
        if (absolute == null) {
            return null;
        }
        if (absolute.equals(root)) {
            return ".";
        }
        if (absolute.startsWith(root + "/")) {
            String rel = absolute.substring(root.length() + 1);
            while (rel.endsWith("/")) {
                rel = rel.substring(0, rel.length() - 1);
            }
            return rel.isEmpty() ? "." : rel;
        }
        return null;
    }

    /**
     * Resolves a checked path to an existing regular file, following links inside the workspace.
     *
     * @throws InvalidSpecException when it is missing or not a regular file
     * @throws dev.codeexec.engine.PathEscapeException when a link on the way leads outside
     */
    protected final String regularFile(String path) {
        String r = links.resolveFrom(path, path, true);
        if (!links.isDir(parentOf(r))) {
            throw new InvalidSpecException("'" + path + "' does not exist");
        }
        RemoteEntry e = lstat(r).orElseThrow(() -> new InvalidSpecException("'" + path + "' does not exist"));
        if (e.type() != EntryType.FILE) {
            throw new InvalidSpecException("'" + path + "' is not a regular file");
        }
        return r;
    }

    // ------------------------------------------------------------------ the operations

    @Override
    public final String resolve(String path) {
        String r = links.resolveFrom(links.checkPath(path), path, true);
        links.trust(r);
        return r;
    }

    /**
     * A run's working directory: {@code cwd} (normalised, relative to the workspace) resolved as the file rules
     * resolve paths, and required to be a directory. One rule for every remote backend.
     *
     * @return the resolved path, relative to the workspace
     * @throws dev.codeexec.engine.PathEscapeException when a link on the way leaves the workspace
     * @throws InvalidSpecException                    when it is not a directory (or does not exist)
     */
    public final String resolveDirectory(String cwd) {
        String resolved = resolve(cwd);
        FileEntry e = stat(resolved).orElse(null);
        if (e == null || e.type() != EntryType.DIRECTORY) {
            throw new InvalidSpecException("cwd '" + cwd + "' is not a directory");
        }
        return resolved;
    }

    @Override
    public final Optional<FileEntry> stat(String path) {
        links.checkPath(path);
        if (path.equals(".")) {
            RemoteEntry r = lstat(".").filter(e -> e.type() == EntryType.DIRECTORY).orElseThrow(this::workspaceGone);
            return Optional.of(new FileEntry(".", EntryType.DIRECTORY, 0, r.mode(), r.mtime()));
        }
        String parent = links.resolveFrom(parentOf(path), path, true);
        if (!links.isDir(parent)) {
            links.requireRoot(); // nothing there, unless the whole workspace is gone
            return Optional.empty();
        }
        return lstat(join(parent, nameOf(path))).map(e -> new FileEntry(path, e.type(),
                e.type() == EntryType.FILE ? e.size() : 0, e.mode(), e.mtime()));
    }

    @Override
    public final void walk(String dir, WalkVisitor visitor) {
        String d = resolve(dir);
        if (d.equals(".")) {
            links.requireRoot();
        } else if (!links.isDir(d)) {
            return;
        }
        List<String> skipped = new ArrayList<>();
        list(d, (rel, e) -> {
            for (String sk : skipped) {
                if (rel.startsWith(sk + "/")) {
                    return true;
                }
            }
            EntryType type = e.type();
            WalkAction a = visitor.visit(new FileEntry(join(dir, rel), type, type == EntryType.FILE ? e.size() : 0,
                    e.mode() & 07777, e.mtime()));
            if (a == WalkAction.STOP) {
                return false;
            }
            if (a == WalkAction.SKIP_SUBTREE && type == EntryType.DIRECTORY) {
                skipped.add(rel);
            }
            return true;
        });
    }

    @Override
    public final FileWindow read(String path, long offset, int maxBytes) {
        links.checkPath(path);
        if (offset < 0 || maxBytes < 0) {
            throw new InvalidSpecException("offset (" + offset + ") and maxBytes (" + maxBytes
                    + ") must not be negative");
        }
        return readFile(path, offset, maxBytes);
    }

    @Override
    public final void export(List<String> paths, ExportVisitor visitor) {
        for (String p : paths) {
            links.checkPath(p);
        }
        for (String path : paths) {
            if (!exportFile(path, visitor)) {
                return;
            }
        }
    }

    @Override
    public final void mkdirs(String path) {
        links.ensureDir(links.checkPath(path), path);
    }

    @Override
    public final void write(String path, byte[] content, int mode) {
        writeAll(List.of(PutFile.of(path, content, mode)));
    }

    /** Checks every path first, then creates the missing parents, then hands the batch to {@link #writeFiles}. */
    @Override
    public final void writeAll(List<PutFile> files) {
        if (files.isEmpty()) {
            return;
        }
        for (PutFile f : files) {
            if (links.checkPath(f.path()).equals(".")) {
                throw new InvalidSpecException("cannot write the workspace root");
            }
        }
        try {
            List<WriteTarget> targets = new ArrayList<>(files.size());
            for (PutFile f : files) {
                String parent = links.ensureDir(parentOf(f.path()), f.path());
                targets.add(new WriteTarget(f, parent, join(parent, nameOf(f.path()))));
            }
            writeFiles(targets);
        } finally {
            forget();
        }
    }

    @Override
    public final void delete(String path) {
        links.checkPath(path);
        if (path.equals(".")) {
            throw new InvalidSpecException("cannot delete the workspace root");
        }
        String parent = links.resolveFrom(parentOf(path), path, true);
        if (!links.isDir(parent)) {
            return;
        }
        String target = join(parent, nameOf(path));
        if (lstat(target).isEmpty()) {
            return;
        }
        try {
            remove(target, path);
        } finally {
            forget();
        }
    }

    @Override
    public final void importTree(ImportSource source, String to, boolean readOnly) {
        links.checkPath(to);
        if (to.equals(".")) {
            throw new InvalidSpecException("cannot import over the workspace root");
        }
        try {
            String parent = links.ensureDir(parentOf(to), to);
            importInto(source, parent, join(parent, nameOf(to)), to, readOnly);
        } finally {
            forget();
        }
    }
}
