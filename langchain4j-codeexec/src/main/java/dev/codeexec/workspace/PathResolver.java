package dev.codeexec.workspace;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place that turns a workspace-relative path into a host path. Every file operation and tool goes through
 * it; no other code joins user paths.
 *
 * <p>Rules: no absolute paths, no {@code ..}, no NUL or backslash, and no component that is a symbolic link resolving
 * outside the workspace. Links are checked against the real file system at the time of use, component by component
 * (like a kernel path walk), not just lexically. A dangling link is refused, since what it will point to is not
 * known.
 *
 * <p>What it cannot prevent: a program running in the workspace at the same moment may swap a checked directory for a
 * link between the check and the use. Readers therefore open the final component with {@code NOFOLLOW_LINKS}, and
 * writers rename a temporary file into place (a rename replaces a link, never writes through it). On backends where
 * programs run as the host user without isolation ({@code LocalEngine}) a program can reach the host anyway.
 */
public final class PathResolver {


    private final Path root;

    /**
     * @param hostRoot the workspace root on the host
     * @throws WorkspaceGoneException when the root does not exist
     */
    public PathResolver(Path hostRoot) {
        try {
            this.root = hostRoot.toRealPath();
        } catch (NoSuchFileException e) {
            throw new WorkspaceGoneException("the workspace no longer exists");
        } catch (IOException e) {
            throw new WorkspaceGoneException("the workspace cannot be opened: " + e.getClass().getSimpleName());
        }
        if (!Files.isDirectory(root)) {
            throw new WorkspaceGoneException("the workspace no longer exists");
        }
    }

    /** The real path of the workspace root. */
    public Path root() {
        return root;
    }

    /**
     * Lexically normalises a workspace-relative path: {@code "a//b/./c"} becomes {@code "a/b/c"}, empty becomes
     * {@code "."}; a leading {@code $OUTPUT_DIR}-style variable is expanded.
     *
     * @throws PathEscapeException   for absolute paths and {@code ..}
     * @throws InvalidSpecException  for null, NUL or backslash
     */
    public static String normalize(String relativePath) {
        if (relativePath == null) {
            throw new InvalidSpecException("path must not be null");
        }
        String p = WorkspaceLayout.expandVariables(relativePath.strip());
        if (p.indexOf('\0') >= 0) {
            throw new InvalidSpecException("path must not contain a NUL character");
        }
        if (p.indexOf('\\') >= 0) {
            throw new InvalidSpecException("path '" + p + "' must use '/' separators, not '\\'");
        }
        if (p.startsWith("/") || p.startsWith("~")) {
            throw new PathEscapeException("path '" + p + "' is absolute; use a path relative to the workspace, "
                    + "such as work/data.csv or out/report.md");
        }
        List<String> parts = new ArrayList<>();
        for (String c : p.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                throw new PathEscapeException("path '" + p + "' contains '..'; paths must stay inside the workspace");
            }
            parts.add(c);
        }
        return parts.isEmpty() ? "." : String.join("/", parts);
    }

    /**
     * Resolves a path that may or may not exist. Existing components are followed through links only while they
     * stay inside the workspace.
     *
     * @throws PathEscapeException when a component leads outside, or a link is dangling
     */
    public Path resolve(String relativePath) {
        String norm = normalize(relativePath);
        Path cur = root;
        if (norm.equals(".")) {
            return cur;
        }
        String[] parts = norm.split("/");
        for (int i = 0; i < parts.length; i++) {
            Path next = cur.resolve(parts[i]);
            BasicFileAttributes attrs = lstat(next);
            if (attrs != null && attrs.isSymbolicLink()) {
                cur = followLink(next, norm);
            } else if (attrs != null) {
                cur = next;
            } else {
                // Nothing below a missing component exists, so the rest cannot contain links.
                for (int j = i; j < parts.length; j++) {
                    cur = cur.resolve(parts[j]);
                }
                return cur;
            }
        }
        return cur;
    }

    /**
     * Resolves a path that must exist.
     *
     * @throws InvalidSpecException when it does not exist
     */
    public Path resolveExisting(String relativePath) {
        Path p = resolve(relativePath);
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidSpecException("'" + normalize(relativePath) + "' does not exist in the workspace");
        }
        return p;
    }

    /**
     * Resolves a path to write, creating its parent directories one component at a time and re-checking each, so a
     * link planted in between cannot redirect the write.
     *
     * @return the host path of the file to write (its parent exists and is inside the workspace)
     */
    public Path resolveForWrite(String relativePath) {
        String norm = normalize(relativePath);
        Path target = entry(norm, true);
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new InvalidSpecException("'" + norm + "' is a directory");
        }
        return target;
    }

    /**
     * The host path of an entry itself, for operations that act on a link rather than through it (delete, replace):
     * its parent directories are resolved and checked like {@link #resolve}, its last component is not followed.
     *
     * @throws InvalidSpecException for the workspace root itself
     */
    public Path resolveEntry(String relativePath) {
        return entry(normalize(relativePath), false);
    }

    /** {@link #resolveEntry} after creating the parent directories safely ({@link #ensureDirectory}). */
    public Path resolveEntryForWrite(String relativePath) {
        return entry(normalize(relativePath), true);
    }

    private Path entry(String norm, boolean createParents) {
        if (norm.equals(".")) {
            throw new InvalidSpecException("this operation needs a path inside the workspace, not its root");
        }
        int slash = norm.lastIndexOf('/');
        String parent = slash < 0 ? "." : norm.substring(0, slash);
        return (createParents ? ensureDirectory(parent) : resolve(parent)).resolve(norm.substring(slash + 1));
    }

    /** Creates a workspace directory (and its parents) safely and returns its real path. */
    public Path ensureDirectory(String relativePath) {
        String norm = normalize(relativePath);
        Path cur = root;
        if (norm.equals(".")) {
            return cur;
        }
        for (String part : norm.split("/")) {
            Path next = cur.resolve(part);
            // The common case, a new run directory, costs no exception: the file API reports a missing path with
            // one, so a cheap check that follows links comes first. A dangling link looks missing to it, but then
            // creating fails, and the link is checked below.
            BasicFileAttributes attrs = next.toFile().exists() ? lstat(next) : null;
            if (attrs == null) {
                try {
                    Files.createDirectory(next);
                    cur = next;
                    continue;
                } catch (FileAlreadyExistsException raced) {
                    attrs = lstat(next);
                } catch (IOException e) {
                    if (WorkspaceSpace.isOutOfSpace(e)) {
                        throw WorkspaceSpace.full(root, e);
                    }
                    throw new InvalidSpecException("cannot create directory '" + norm + "': "
                            + e.getClass().getSimpleName());
                }
                if (attrs == null) {
                    throw new InvalidSpecException("cannot create directory '" + norm + "': it is being changed");
                }
            }
            if (attrs.isSymbolicLink()) {
                next = followLink(next, norm);
            } else if (!attrs.isDirectory()) {
                throw new InvalidSpecException("'" + relativize(next) + "' is not a directory");
            }
            if (!Files.isDirectory(next, LinkOption.NOFOLLOW_LINKS)) {
                throw new InvalidSpecException("'" + relativize(next) + "' is not a directory");
            }
            cur = next;
        }
        return cur;
    }

    /** The attributes of a path itself (not following a link), or null when nothing is there. */
    private static BasicFileAttributes lstat(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    /** The workspace-relative form of a host path inside the workspace ({@code "."} for the root). */
    public String relativize(Path hostPath) {
        Path rel = root.relativize(hostPath.toAbsolutePath().normalize());
        String s = rel.toString().replace('\\', '/');
        return s.isEmpty() ? "." : s;
    }

    /** True when a host path (already real) is the root or below it. */
    public boolean contains(Path realPath) {
        return realPath.startsWith(root);
    }

    private Path followLink(Path link, String requested) {
        Path real;
        try {
            real = link.toRealPath();
        } catch (IOException e) {
            throw new PathEscapeException("path '" + requested + "' passes through a link that does not resolve");
        }
        if (!real.startsWith(root)) {
            throw new PathEscapeException("path '" + requested + "' passes through a link that leads outside the "
                    + "workspace");
        }
        return real;
    }
}
