package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How command names are compared. Deny lists and validator keys match loosely (so a spelling cannot dodge them); allow
 * lists match exactly (so a spelling cannot widen them).
 */
final class CommandNames {

    /** Suffixes that Windows resolves implicitly; stripped on every OS because stripping only widens a deny. */
    private static final List<String> EXECUTABLE_SUFFIXES = List.of(".exe", ".cmd", ".bat", ".com", ".ps1");

    private CommandNames() {
    }

    /** True when {@code word} names a file by path rather than a command to look up on PATH. */
    static boolean isPathful(String word) {
        return word.indexOf('/') >= 0 || word.indexOf('\\') >= 0;
    }

    /** The last path component, or the word itself when it has none (or ends with a separator). */
    static String basename(String word) {
        int slash = Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\'));
        if (slash < 0) {
            return word;
        }
        String base = word.substring(slash + 1);
        return base.isEmpty() ? word : base;
    }

    /** Case folding independent of the default locale (Turkish dotless i must not change a match). */
    static String fold(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    /**
     * Every loose spelling a deny entry or validator key may match, most specific first: the folded word, its
     * basename, the basename without a Windows executable suffix, and that with trailing versions removed one at a
     * time.
     */
    static List<String> candidates(String word) {
        List<String> out = new ArrayList<>(6);
        add(out, fold(word));
        String base = fold(basename(word));
        add(out, base);
        base = stripSuffix(base);
        add(out, base);
        while (true) {
            int cut = versionStart(base);
            if (cut <= 0) {
                return out;
            }
            base = base.substring(0, cut);
            add(out, base);
        }
    }

    /**
     * Where a trailing version ({@code [._-]?[0-9]+} at the end) starts, or -1 when there is none. Hand-written
     * rather than a regular expression, whose backtracking would be quadratic on a long run of digits.
     */
    private static int versionStart(String s) {
        int k = s.length();
        while (k > 0 && s.charAt(k - 1) >= '0' && s.charAt(k - 1) <= '9') {
            k--;
        }
        if (k == s.length()) {
            return -1;
        }
        if (k > 0 && (s.charAt(k - 1) == '.' || s.charAt(k - 1) == '_' || s.charAt(k - 1) == '-')) {
            k--;
        }
        return k;
    }

    /**
     * The key under which a deny entry or validator is stored: its folded basename without a Windows executable
     * suffix, so that a deny of {@code curl.exe} also matches {@code CURL}.
     */
    static String key(String entry) {
        return stripSuffix(fold(basename(entry)));
    }

    private static String stripSuffix(String base) {
        for (String suffix : EXECUTABLE_SUFFIXES) {
            if (base.endsWith(suffix) && base.length() > suffix.length()) {
                return base.substring(0, base.length() - suffix.length());
            }
        }
        return base;
    }

    private static void add(List<String> out, String s) {
        if (!s.isEmpty() && !out.contains(s)) {
            out.add(s);
        }
    }
}
