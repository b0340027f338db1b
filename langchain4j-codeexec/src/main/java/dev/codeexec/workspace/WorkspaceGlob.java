package dev.codeexec.workspace;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.util.regex.Pattern;

/**
 * A workspace-relative glob, the one glob syntax of the library (output globs, listings, the sandbox's no-access
 * globs):
 * <ul>
 *   <li>{@code *} and {@code ?} match within one path segment;</li>
 *   <li>{@code **} crosses directories; {@code **}{@code /} matches zero or more whole directories, so
 *       {@code **}{@code /*.csv} finds {@code data.csv} and {@code a/b/data.csv}, and {@code out/**} everything
 *       below {@code out/};</li>
 *   <li>{@code [abc]}, {@code [a-z]}, {@code [!abc]} are character classes within a segment;</li>
 *   <li>{@code {png,jpg}} is an alternation of literal texts.</li>
 * </ul>
 * A leading {@code $OUTPUT_DIR}-style variable is expanded; absolute patterns and {@code ..} are refused.
 */
public final class WorkspaceGlob {

    private final String pattern;
    private final String base;
    private final Pattern regex;

    private WorkspaceGlob(String pattern) {
        this.pattern = pattern;
        this.base = staticPrefix(pattern);
        this.regex = Pattern.compile(toRegex(pattern), Pattern.DOTALL);
    }

    /**
     * Compiles a workspace glob.
     *
     * @throws PathEscapeException  for absolute patterns and {@code ..}
     * @throws InvalidSpecException for blank or malformed patterns
     */
    public static WorkspaceGlob compile(String glob) {
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
        return new WorkspaceGlob(g);
    }

    /** True when the text contains glob syntax. */
    public static boolean isGlob(String s) {
        return s.chars().anyMatch(c -> c == '*' || c == '?' || c == '[' || c == '{');
    }

    /**
     * The regular expression of a glob (without validation), for matching other names with the same syntax, such as
     * environment variable patterns.
     *
     * @throws InvalidSpecException for an unclosed {@code [} or <code>{</code>
     */
    public static String toRegex(String glob) {
        StringBuilder re = new StringBuilder();
        int n = glob.length();
        for (int i = 0; i < n; i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*' -> {
                    if (i + 1 < n && glob.charAt(i + 1) == '*') {
                        boolean segmentStart = i == 0 || glob.charAt(i - 1) == '/';
                        if (segmentStart && i + 2 < n && glob.charAt(i + 2) == '/') {
                            re.append("(?:[^/]+/)*");
                            i += 2;
                        } else {
                            re.append(".*");
                            i += 1;
                        }
                    } else {
                        re.append("[^/]*");
                    }
                }
                case '?' -> re.append("[^/]");
                case '[' -> {
                    int end = glob.indexOf(']', i + 2);
                    if (end < 0) {
                        throw new InvalidSpecException("glob '" + glob + "' has an unclosed '['");
                    }
                    String body = glob.substring(i + 1, end);
                    boolean negate = body.startsWith("!") || body.startsWith("^");
                    if (negate) {
                        body = body.substring(1);
                    }
                    StringBuilder cls = new StringBuilder("[").append(negate ? "^/" : "");
                    for (char b : body.toCharArray()) {
                        if (b == '\\' || b == '[' || b == ']' || b == '^' || b == '&') {
                            cls.append('\\');
                        }
                        cls.append(b);
                    }
                    re.append(cls).append(']');
                    i = end;
                }
                case '{' -> {
                    int end = glob.indexOf('}', i + 1);
                    if (end < 0) {
                        throw new InvalidSpecException("glob '" + glob + "' has an unclosed '{'");
                    }
                    re.append("(?:");
                    String[] alternatives = glob.substring(i + 1, end).split(",", -1);
                    for (int k = 0; k < alternatives.length; k++) {
                        re.append(k == 0 ? "" : "|").append(Pattern.quote(alternatives[k]));
                    }
                    re.append(')');
                    i = end;
                }
                default -> {
                    if ("\\.^$|+()}".indexOf(c) >= 0) {
                        re.append('\\');
                    }
                    re.append(c);
                }
            }
        }
        return re.toString();
    }

    /** The pattern as compiled (variables expanded, leading {@code ./} removed). */
    public String pattern() {
        return pattern;
    }

    /** The directory to walk: the segments before the first one with glob syntax ({@code "."} for none). */
    public String base() {
        return base;
    }

    /** True when a normalised workspace-relative path ({@code /} separators, no leading slash) matches. */
    public boolean matches(String relativePath) {
        return regex.matcher(relativePath).matches();
    }

    @Override
    public String toString() {
        return pattern;
    }

    private static String staticPrefix(String pattern) {
        if (!isGlob(pattern)) {
            return pattern;
        }
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
        return sb.length() == 0 ? "." : sb.toString();
    }
}
