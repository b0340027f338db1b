package dev.codeexec.artifact;

import java.util.Objects;

/**
 * A reference {@code artifact://name[@version]}, such as {@code artifact://reports/q1.md@3}. The version is split
 * off at the last {@code @} only when what follows is all digits (at most 9 of them), so parsing does not depend on
 * a store's name rules: {@code a@b} is the name {@code a@b}, {@code a@b@2} is version 2 of {@code a@b}. (The stores
 * in this package accept only {@code [A-Za-z0-9._-]} segments, so they refuse such names when asked to load them.)
 * A reference is not validated against a store; the store validates the name when it is used.
 *
 * @param name    the artifact name
 * @param version the version, or null for "latest"
 */
public record ArtifactRef(String name, Integer version) {

    /** The URI scheme prefix. */
    public static final String SCHEME = "artifact://";

    /**
     * @param name    the artifact name; not checked against any store's name rules here
     * @param version the version, or null for "latest"
     * @throws IllegalArgumentException when the name is null or blank, or the version is less than 1
     */
    public ArtifactRef {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("artifact name must not be blank");
        }
        if (version != null && version < 1) {
            throw new IllegalArgumentException("artifact version (" + version + ") must be 1 or more");
        }
    }

    /**
     * Parses {@code artifact://name[@version]} (the scheme is optional).
     *
     * @param ref the text to parse
     * @return the reference; its version is null when none was given
     * @throws IllegalArgumentException for an empty name or a version of 0
     */
    public static ArtifactRef parse(String ref) {
        Objects.requireNonNull(ref, "ref");
        String s = ref.startsWith(SCHEME) ? ref.substring(SCHEME.length()) : ref;
        int at = s.lastIndexOf('@');
        // ASCII digits only: Character.isDigit would also take e.g. Arabic-Indic digits, which parseInt accepts.
        if (at > 0 && at < s.length() - 1 && s.substring(at + 1).chars().allMatch(c -> c >= '0' && c <= '9')
                && s.length() - at - 1 <= 9) {
            return new ArtifactRef(s.substring(0, at), Integer.parseInt(s.substring(at + 1)));
        }
        return new ArtifactRef(s, null);
    }

    /**
     * A reference to the latest version.
     *
     * @param name the artifact name
     * @return a reference without a version
     */
    public static ArtifactRef latest(String name) {
        return new ArtifactRef(name, null);
    }

    /**
     * Tells an artifact reference from other input sources ({@code workspace://}, host paths).
     *
     * @param s any text, may be null
     * @return true when {@code s} starts with {@code artifact://}
     */
    public static boolean isArtifactRef(String s) {
        return s != null && s.startsWith(SCHEME);
    }

    @Override
    public String toString() {
        return SCHEME + name + (version == null ? "" : "@" + version);
    }
}
