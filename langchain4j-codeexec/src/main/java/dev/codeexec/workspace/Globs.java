package dev.codeexec.workspace;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;

/**
 * A workspace glob: {@code *} and {@code ?} within a component, {@code **} across components, {@code [..]} and
 * {@code {a,b}} as in {@link java.nio.file.FileSystem#getPathMatcher}. A leading {@code **}{@code /} also matches at
 * the top level, so {@code **}{@code /*.csv} finds {@code data.csv}.
 */
final class Globs {

    private final String pattern;
    private final String base;
    private final PathMatcher matcher;
    private final PathMatcher topLevel;

    private Globs(String pattern) {
        this.pattern = pattern;
        this.base = staticPrefix(pattern);
        this.matcher = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
        this.topLevel = pattern.startsWith("**/")
                ? FileSystems.getDefault().getPathMatcher("glob:" + pattern.substring(3)) : null;
    }

    /**
     * Compiles a workspace glob.
     *
     * @throws PathEscapeException  for absolute patterns and {@code ..}
     * @throws InvalidSpecException for malformed patterns
     */
    static Globs compile(String glob) {
        if (glob == null || glob.isBlank()) {
            throw new InvalidSpecException("glob must not be blank");
        }
        String g = WorkspaceLayout.expandVariables(glob.strip());
        if (g.startsWith("/") || g.startsWith("~")) {
            throw new PathEscapeException("glob '" + g + "' is absolute; use a workspace-relative glob like out/**");
        }
        for (String c : g.split("/")) {
            if (c.equals("..")) {
                throw new PathEscapeException("glob '" + g + "' contains '..'");
            }
        }
        if (g.indexOf('\\') >= 0 || g.indexOf('\0') >= 0) {
            throw new InvalidSpecException("glob '" + g + "' must not contain '\\' or NUL");
        }
        while (g.startsWith("./")) {
            g = g.substring(2);
        }
        try {
            return new Globs(g);
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException("glob '" + g + "' is malformed: " + e.getMessage());
        }
    }

    /** True when the text contains glob syntax. */
    static boolean isGlob(String s) {
        return s.chars().anyMatch(c -> c == '*' || c == '?' || c == '[' || c == '{');
    }

    /** The directory to walk: the components before the first one with glob syntax ({@code "."} for none). */
    String base() {
        return base;
    }

    String pattern() {
        return pattern;
    }

    /** True when a normalised workspace-relative path matches. */
    boolean matches(String relativePath) {
        Path p = Path.of(relativePath);
        return matcher.matches(p) || (topLevel != null && topLevel.matches(p));
    }

    private static String staticPrefix(String pattern) {
        StringBuilder sb = new StringBuilder();
        String[] parts = pattern.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            if (isGlob(parts[i])) {
                break;
            }
            if (sb.length() > 0) {
                sb.append('/');
            }
            sb.append(parts[i]);
        }
        if (!isGlob(pattern)) {
            return pattern;
        }
        return sb.length() == 0 ? "." : sb.toString();
    }
}
