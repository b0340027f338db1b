package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Path helpers shared by the planning steps of {@link SandboxLayout}: string arithmetic on absolute paths, and
 * looks at the host that never follow a symbolic link at the name itself (or, where they do, say so). Kept apart
 * so that each step reads as what it decides, not how a path is inspected; every helper answers instead of
 * throwing, because a path that vanishes or cannot be read is a normal outcome the caller decides about.
 */
final class LayoutPaths {

    private LayoutPaths() {
    }

    /** The parent of an absolute path, or null for "/". */
    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        if (slash < 0 || path.equals("/")) {
            return null;
        }
        return slash == 0 ? "/" : path.substring(0, slash);
    }

    static BasicFileAttributes attributes(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    /** A path for messages: workspace-relative inside the workspace, else only its last name (no host paths). */
    static String display(String path, Path workspace) {
        String ws = workspace.toString();
        if (path.startsWith(ws + "/")) {
            return path.substring(ws.length() + 1);
        }
        Path name = Path.of(path).getFileName();
        return name == null ? path : name.toString();
    }

    static boolean isAtOrBelow(String path, String root) {
        return path.equals(root) || root.equals("/") || path.startsWith(root + "/");
    }

    static int depth(String path) {
        int d = 0;
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                d++;
            }
        }
        return d;
    }

    /**
     * Cheap existence test: {@code java.io.File} stats without throwing, where NIO's checks build an exception for
     * every missing path (most hidden-path candidates are missing, and this runs for every run). A dangling link
     * counts as missing: there is nothing behind it to hide or grant.
     */
    static boolean present(Path p) {
        return p.toFile().exists();
    }

    static String real(Path p) {
        try {
            return p.toRealPath().toString();
        } catch (IOException e) {
            return null;
        }
    }

    static int links(Path p) {
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
}
