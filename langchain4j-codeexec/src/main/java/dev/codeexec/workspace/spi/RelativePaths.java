package dev.codeexec.workspace.spi;

import dev.codeexec.engine.PathEscapeException;

/**
 * The syntax of the workspace-relative paths a remote {@link WorkspaceFiles} works on (a container's, E2B's):
 * normalised (no {@code .}, {@code ..} or empty segment), never absolute, no NUL; {@code "."} is the root. Backend SPI.
 */
public final class RelativePaths {

    private RelativePaths() {
    }

    /**
     * Returns {@code path} when it is a normalised relative path.
     *
     * @throws PathEscapeException when it is absolute, malformed, leaves the workspace or is not normalised
     */
    public static String check(String path) {
        if (path == null || path.startsWith("/") || path.contains("\\") || path.indexOf('\0') >= 0) {
            throw new PathEscapeException("path '" + path + "' is absolute or malformed");
        }
        if (path.equals(".")) {
            return ".";
        }
        for (String seg : path.split("/", -1)) {
            if (seg.equals("..")) {
                throw new PathEscapeException("path '" + path + "' leaves the workspace");
            }
            if (seg.isEmpty() || seg.equals(".")) {
                throw new PathEscapeException("path '" + path + "' is not normalised");
            }
        }
        return path;
    }

    /** The parent of a relative path; {@code "."} for a top-level name. */
    public static String parentOf(String rel) {
        int i = rel.lastIndexOf('/');
        return i < 0 ? "." : rel.substring(0, i);
    }

    /** The last segment of a relative path. */
    public static String nameOf(String rel) {
        return rel.substring(rel.lastIndexOf('/') + 1);
    }

    /** {@code dir/name}, or {@code name} under the root. */
    public static String join(String dir, String name) {
        return dir.equals(".") ? name : dir + "/" + name;
    }
}
