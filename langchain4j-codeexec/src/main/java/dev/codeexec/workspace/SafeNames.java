package dev.codeexec.workspace;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The one sanitiser for names that come from outside (file names of uploads, workspace paths, conversation ids) and
 * become file names, directory names or artifact names. Every variant maps each character outside the safe set
 * {@code [A-Za-z0-9._-]} to {@code _} (a character outside the Basic Multilingual Plane counts as one character), so
 * no result can carry a separator, a NUL, a control character, a drive letter or a shell metacharacter; the
 * variants differ only in what else they guarantee:
 * <ul>
 *   <li>{@link #fileName} — one readable file name: the last path segment, no leading dot, bounded length;</li>
 *   <li>{@link #path} — a {@code /}-separated path keeping its separators, for artifact names derived from
 *       workspace paths;</li>
 *   <li>{@link #label} — a readable label without dots ({@code [A-Za-z0-9_-]}), bounded length, for directory names
 *       that carry a random suffix anyway;</li>
 *   <li>{@link #uniqueSegment} — one segment that stands for its input and for nothing else (injective), for keys
 *       that separate tenants, such as the conversation part of an artifact name.</li>
 * </ul>
 * Only {@link #uniqueSegment} is injective; the other variants are for readability where a collision is harmless or
 * resolved elsewhere (an upload that gets a {@code _2} suffix, a workspace directory with a random suffix).
 *
 * <p>Stateless and thread-safe.
 */
public final class SafeNames {

    /** {@value}: the longest input {@link #uniqueSegment} keeps as it is. */
    public static final int MAX_KEPT_SEGMENT = 64;

    /** {@value}: hex digits of the hash {@link #uniqueSegment} appends (96 bits: collisions cannot be searched for). */
    static final int HASH_HEX_DIGITS = 24;

    /** {@value}: characters of the readable part of a hashed {@link #uniqueSegment}. */
    static final int HASHED_LABEL_LENGTH = 40;

    /** The marker between the readable part and the hash; a kept segment never contains it. */
    private static final String HASH_MARKER = "__";

    /**
     * Segments kept as they are by {@link #uniqueSegment}: lower case (so that two keys never meet on a
     * case-insensitive file system), not starting with a dot (hidden, {@code .}, {@code ..}), not ending with one
     * (dropped by some file systems), no marker.
     */
    private static final Pattern KEPT_SEGMENT = Pattern.compile("[a-z0-9_-]([a-z0-9._-]{0," + (MAX_KEPT_SEGMENT - 2)
            + "}[a-z0-9_-])?");

    private static final int MAX_EXTENSION = 10;

    private SafeNames() {
    }

    /**
     * One safe file name: the last segment of {@code raw} (after a {@code /} or a {@code \}), unsafe characters
     * replaced by {@code _}, leading dots removed (no hidden files, never {@code .} or {@code ..}), cut to
     * {@code maxLength} characters keeping an extension of up to 10 characters. When nothing but underscores is left,
     * {@code fallback}.
     *
     * <p>Not injective: {@code a b} and {@code a_b} give the same name; callers that need distinct files make them
     * unique themselves.
     *
     * @param raw       any text, may be null (then {@code fallback})
     * @param fallback  the name for an input without a usable character; must itself be safe
     * @param maxLength the longest result, at least 16
     * @return a name matching {@code [A-Za-z0-9_-][A-Za-z0-9._-]*}, at most {@code maxLength} characters
     */
    public static String fileName(String raw, String fallback, int maxLength) {
        if (maxLength < 16) {
            throw new IllegalArgumentException("maxLength (" + maxLength + ") must be at least 16");
        }
        String s = raw == null ? "" : raw.replace('\\', '/');
        s = replaceUnsafe(s.substring(s.lastIndexOf('/') + 1), "._-");
        int start = 0;
        while (start < s.length() && s.charAt(start) == '.') {
            start++;
        }
        s = s.substring(start);
        if (s.chars().allMatch(c -> c == '_')) {
            return fallback;
        }
        if (s.length() > maxLength) {
            int dot = s.lastIndexOf('.');
            String ext = dot > 0 && s.length() - dot <= MAX_EXTENSION ? s.substring(dot) : "";
            s = s.substring(0, maxLength - ext.length()) + ext;
        }
        return s;
    }

    /**
     * A {@code /}-separated path with unsafe characters replaced by {@code _} in every segment; the separators stay.
     * For a normalised workspace path ({@code out/q1 report.md}) the result is a valid artifact name
     * ({@code out/q1_report.md}) unless it is too long; other inputs are not checked further.
     *
     * @param path a path in normal form (no empty, {@code .} or {@code ..} segment)
     */
    public static String path(String path) {
        return replaceUnsafe(path, "._-/");
    }

    /**
     * A readable label: unsafe characters and dots replaced by {@code _}, cut to {@code maxLength} characters;
     * {@code fallback} for a null or blank input. Not injective: add a random or unique suffix where names must differ.
     *
     * @param raw       any text, may be null
     * @param fallback  the label for a null or blank input; must itself be safe
     * @param maxLength the longest result, at least 1
     * @return a label matching {@code [A-Za-z0-9_-]+}
     */
    public static String label(String raw, String fallback, int maxLength) {
        if (maxLength < 1) {
            throw new IllegalArgumentException("maxLength (" + maxLength + ") must be at least 1");
        }
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        String s = replaceUnsafe(raw, "_-");
        return s.length() > maxLength ? s.substring(0, maxLength) : s;
    }

    /**
     * One path segment that stands for {@code raw} and for nothing else. An input that already is a safe segment
     * (lower case {@code [a-z0-9._-]}, neither starting nor ending with a dot, at most {@value #MAX_KEPT_SEGMENT}
     * characters, without {@code __}) is returned unchanged, so {@code alice} and UUIDs stay readable. Any other input becomes its
     * {@linkplain #label label} in lower case (at most 40 characters), then {@code __}, then 24 hex digits of the
     * SHA-256 of its UTF-8 bytes: {@code Alice} becomes {@code alice__} followed by the hash.
     *
     * <p>Injective: a kept segment never contains {@code __} and a hashed one always does, and two hashed segments
     * differ in their hash unless SHA-256 collides in 96 bits. Case-insensitive file systems cannot merge two results
     * either: kept segments are lower case, and the hash is.
     *
     * @param raw the key, not null; may be empty
     * @return a segment of {@code [a-z0-9._-]}, neither {@code .} nor {@code ..}, at most 66 characters
     */
    public static String uniqueSegment(String raw) {
        if (raw == null) {
            throw new IllegalArgumentException("raw must not be null");
        }
        if (KEPT_SEGMENT.matcher(raw).matches() && !raw.contains(HASH_MARKER)) {
            return raw;
        }
        String readable = label(raw.toLowerCase(Locale.ROOT), "", HASHED_LABEL_LENGTH).toLowerCase(Locale.ROOT);
        return readable + HASH_MARKER + sha256Hex(raw).substring(0, HASH_HEX_DIGITS);
    }

    /** Replaces every code point outside {@code [A-Za-z0-9]} and {@code alsoSafe} by one {@code _}. */
    private static String replaceUnsafe(String s, String alsoSafe) {
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(c -> b.append((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || (c < 128 && alsoSafe.indexOf(c) >= 0) ? (char) c : '_'));
        return b.toString();
    }

    /**
     * SHA-256 of the string's UTF-16 code units, taken as they are: a charset encoder would replace unpaired
     * surrogates, so two different keys could hash alike.
     */
    private static String sha256Hex(String s) {
        try {
            java.nio.ByteBuffer units = java.nio.ByteBuffer.allocate(s.length() * 2);
            s.chars().forEach(c -> units.putChar((char) c));
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(units.array()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
