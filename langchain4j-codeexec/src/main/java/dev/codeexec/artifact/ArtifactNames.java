package dev.codeexec.artifact;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The one place that decides which artifact names and MIME types a store accepts. Every {@link ArtifactService}
 * implementation in this package calls it before touching its storage, so the rules cannot drift apart.
 *
 * <p>A name is a relative, {@code /}-separated path of one or more segments. Each segment is made of
 * {@code [A-Za-z0-9._-]}, is not empty, and is neither {@code .} nor {@code ..}. The whole name has at most
 * {@value #MAX_NAME_LENGTH} characters. The character set is deliberately small: it maps one-to-one onto a
 * directory path on every common file system, so no escaping is needed and no name can smuggle a separator, a
 * drive letter, a NUL or a control character into a path.
 */
final class ArtifactNames {

    /** The longest accepted name, in characters (one file-name component on most file systems). */
    static final int MAX_NAME_LENGTH = 255;

    /** The longest accepted MIME type, in characters. */
    static final int MAX_MIME_TYPE_LENGTH = 255;

    /** What a null or blank MIME type means. */
    static final String DEFAULT_MIME_TYPE = "application/octet-stream";

    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._-]+");

    /** How much of a bad name is quoted in a message; enough to recognise it, short enough for a log line. */
    private static final int QUOTE_LIMIT = 80;

    private ArtifactNames() {
    }

    /**
     * Checks a name against the rules and returns it unchanged.
     *
     * @throws IllegalArgumentException naming the bad name and the rule it breaks
     */
    static String validate(String name) {
        if (name == null) {
            throw new IllegalArgumentException("artifact name must not be null");
        }
        String problem = problem(name);
        if (problem != null) {
            throw new IllegalArgumentException("artifact name " + quote(name) + " is invalid: " + problem
                    + " (names are relative '/'-separated paths of [A-Za-z0-9._-] segments, at most "
                    + MAX_NAME_LENGTH + " characters)");
        }
        return name;
    }

    /** True when {@code name} satisfies {@link #validate(String)}. */
    static boolean isValid(String name) {
        return name != null && problem(name) == null;
    }

    /** The segments of a valid name. */
    static List<String> segments(String name) {
        return List.of(validate(name).split("/"));
    }

    /**
     * Normalises a MIME type: null or blank means {@value #DEFAULT_MIME_TYPE}; otherwise surrounding whitespace is removed and it must be
     * printable ASCII of at most {@value #MAX_MIME_TYPE_LENGTH} characters (it is stored and later handed to
     * programs and HTTP headers, where control characters would be an injection vector).
     *
     * @throws IllegalArgumentException naming the bad value
     */
    static String mimeType(String mimeType) {
        if (mimeType == null || mimeType.isBlank()) {
            return DEFAULT_MIME_TYPE;
        }
        String m = mimeType.strip(); // strip, not trim: trim would silently drop a trailing NUL or other control character
        if (m.length() > MAX_MIME_TYPE_LENGTH) {
            throw new IllegalArgumentException("mimeType " + quote(m) + " is longer than " + MAX_MIME_TYPE_LENGTH
                    + " characters");
        }
        for (int i = 0; i < m.length(); i++) {
            char c = m.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("mimeType " + quote(m)
                        + " contains a character that is not printable ASCII");
            }
        }
        return m;
    }

    private static String problem(String name) {
        if (name.isEmpty()) {
            return "it is empty";
        }
        if (name.length() > MAX_NAME_LENGTH) {
            return "it has " + name.length() + " characters";
        }
        if (name.startsWith("/")) {
            return "it is absolute";
        }
        // -1 keeps trailing empty segments, so "a/" is caught as an empty segment.
        for (String segment : name.split("/", -1)) {
            if (segment.isEmpty()) {
                return "it has an empty segment";
            }
            if (segment.equals(".") || segment.equals("..")) {
                return "it has a '" + segment + "' segment";
            }
            if (!SEGMENT.matcher(segment).matches()) {
                return "segment " + quote(segment) + " has a character outside [A-Za-z0-9._-]";
            }
        }
        return null;
    }

    /**
     * Quotes a user-supplied value for a message: control and non-ASCII characters become {@code \}{@code uXXXX}
     * escapes (a NUL or a newline must not cut or forge a log line) and long values are shortened.
     */
    static String quote(String value) {
        StringBuilder sb = new StringBuilder("'");
        int limit = Math.min(value.length(), QUOTE_LIMIT);
        for (int i = 0; i < limit; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '\'' || c == '\\') {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        if (value.length() > limit) {
            sb.append("...");
        }
        return sb.append('\'').toString();
    }
}
