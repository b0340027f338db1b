package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
     * basename, the basename without a Windows executable suffix, and that with trailing versions and build variants
     * removed one at a time ({@code python3.13t}, {@code python3.6m}, {@code python3.11-dbg} and {@code python3.11}
     * all end in {@code python}). At most {@value #MAX_STRIPS} are removed, which no real name needs, so that a long
     * word of alternating digits and dots cannot make thousands of candidates.
     */
    static List<String> candidates(String word) {
        List<String> out = new ArrayList<>(6);
        add(out, fold(word));
        String base = fold(basename(word));
        add(out, base);
        base = stripSuffix(base);
        add(out, base);
        for (int strips = 0; strips < MAX_STRIPS; strips++) {
            int cut = versionStart(base);
            if (cut <= 0) {
                cut = variantStart(base);
            }
            if (cut <= 0) {
                break;
            }
            base = base.substring(0, cut);
            add(out, base);
        }
        return out;
    }

    /** A tool name behind a target triple ({@code x86_64-linux-gnu-gcc}). */
    private static final Pattern CROSS_TOOL =
            Pattern.compile("[a-z0-9_.]+(?:-[a-z0-9_.]+)*-(gcc|g\\+\\+|cc|c\\+\\+|clang|clang\\+\\+|gfortran|cpp)");

    /**
     * The compiler name behind a cross toolchain's prefix among {@code candidates} ({@code x86_64-linux-gnu-gcc-12}
     * gives {@code gcc}), or null.
     */
    static String crossTool(List<String> candidates) {
        for (String c : candidates) {
            if (c.length() <= 255) {
                Matcher m = CROSS_TOOL.matcher(c);
                if (m.matches()) {
                    return m.group(1);
                }
            }
        }
        return null;
    }

    /** How many versions and variants {@link #candidates} removes at most. */
    static final int MAX_STRIPS = 16;

    /**
     * Where a build variant after a version starts, or -1 when there is none: {@code -dbg}, or one to three ABI
     * letters {@code d m t u} right after a digit ({@code python3.13t} free-threaded, {@code python3.6m},
     * {@code python2.7mu}, {@code python3.11d} debug).
     */
    private static int variantStart(String s) {
        if (s.endsWith("-dbg") && s.length() > 4) {
            return s.length() - 4;
        }
        int k = s.length();
        while (k > 0 && s.length() - k < 3 && "dmtu".indexOf(s.charAt(k - 1)) >= 0) {
            k--;
        }
        if (k == s.length() || k == 0 || s.charAt(k - 1) < '0' || s.charAt(k - 1) > '9') {
            return -1;
        }
        return k;
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

    /** A name as a refusal message shows it: at most 80 characters. */
    static String shown(String name) {
        return name.length() <= 80 ? name : name.substring(0, 77) + "...";
    }

    /** The first 40 names of a list, for a refusal message, and how many more there are. */
    static String summary(Set<String> names) {
        List<String> list = new ArrayList<>(names);
        if (list.size() <= 40) {
            return String.join(", ", list);
        }
        return String.join(", ", list.subList(0, 40)) + ", ... (" + (list.size() - 40) + " more)";
    }

    /**
     * Checks one entry of a policy's allow or deny list or validator map: one command name or path, without
     * whitespace or control characters, not a directory.
     *
     * @throws InvalidSpecException naming the list ({@code what}) and the entry
     */
    static String entry(String entry, String what) {
        if (entry == null || entry.isBlank()) {
            throw new InvalidSpecException(what + " entry (" + entry + ") must not be null or blank");
        }
        for (int k = 0; k < entry.length(); k++) {
            char c = entry.charAt(k);
            if (Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw new InvalidSpecException(what + " entry ('" + entry.strip() + "') must be one command name"
                        + " or path, without whitespace or control characters");
            }
        }
        if (entry.endsWith("/")) {
            throw new InvalidSpecException(what + " entry ('" + entry + "') must name a file, not a directory");
        }
        return entry;
    }
}
