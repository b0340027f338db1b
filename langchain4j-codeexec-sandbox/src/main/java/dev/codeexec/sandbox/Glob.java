package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import java.util.regex.Pattern;

/**
 * A workspace-relative glob: {@code *} and {@code ?} stay within a segment, {@code **} crosses directories,
 * {@code [abc]} / {@code [!abc]} are character classes. Matches whole relative paths such as {@code work/.env}.
 */
final class Glob {

    private final String pattern;
    private final Pattern regex;

    private Glob(String pattern, Pattern regex) {
        this.pattern = pattern;
        this.regex = regex;
    }

    static Glob compile(String glob) {
        return new Glob(glob, Pattern.compile(toRegex(glob), Pattern.DOTALL));
    }

    String pattern() {
        return pattern;
    }

    /** True when the workspace-relative path (no leading slash, "/" separators) matches. */
    boolean matches(String relativePath) {
        return regex.matcher(relativePath).matches();
    }

    static String toRegex(String glob) {
        StringBuilder re = new StringBuilder();
        int n = glob.length();
        for (int i = 0; i < n; i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*':
                    if (i + 1 < n && glob.charAt(i + 1) == '*') {
                        boolean segmentStart = i == 0 || glob.charAt(i - 1) == '/';
                        if (segmentStart && i + 2 < n && glob.charAt(i + 2) == '/') {
                            re.append("(?:[^/]+/)*"); // "**/": zero or more whole directories
                            i += 2;
                        } else {
                            re.append(".*");
                            i += 1;
                        }
                    } else {
                        re.append("[^/]*");
                    }
                    break;
                case '?':
                    re.append("[^/]");
                    break;
                case '[': {
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
                    break;
                }
                default:
                    if ("\\.^$|+(){}".indexOf(c) >= 0) {
                        re.append('\\');
                    }
                    re.append(c);
            }
        }
        return re.toString();
    }

    @Override
    public String toString() {
        return pattern;
    }
}
