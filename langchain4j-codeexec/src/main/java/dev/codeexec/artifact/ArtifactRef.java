package dev.codeexec.artifact;

import java.util.Objects;

/**
 * A reference {@code artifact://name[@version]}. The version is split off at the last {@code @} only when what
 * follows is all digits, so names may contain {@code @}.
 *
 * @param name    the artifact name
 * @param version the version, or null for "latest"
 */
public record ArtifactRef(String name, Integer version) {

    /** The URI scheme prefix. */
    public static final String SCHEME = "artifact://";

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
     * @throws IllegalArgumentException for an empty name or a version of 0
     */
    public static ArtifactRef parse(String ref) {
        Objects.requireNonNull(ref, "ref");
        String s = ref.startsWith(SCHEME) ? ref.substring(SCHEME.length()) : ref;
        int at = s.lastIndexOf('@');
        if (at > 0 && at < s.length() - 1 && s.substring(at + 1).chars().allMatch(Character::isDigit)
                && s.length() - at - 1 <= 9) {
            return new ArtifactRef(s.substring(0, at), Integer.parseInt(s.substring(at + 1)));
        }
        return new ArtifactRef(s, null);
    }

    /** A reference to the latest version. */
    public static ArtifactRef latest(String name) {
        return new ArtifactRef(name, null);
    }

    /** True when {@code s} starts with {@code artifact://}. */
    public static boolean isArtifactRef(String s) {
        return s != null && s.startsWith(SCHEME);
    }

    @Override
    public String toString() {
        return SCHEME + name + (version == null ? "" : "@" + version);
    }
}
