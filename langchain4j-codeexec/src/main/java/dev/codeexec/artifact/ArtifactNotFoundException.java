package dev.codeexec.artifact;

import dev.codeexec.engine.InvalidSpecException;

import java.util.List;

/**
 * The artifact, or the requested version of it, does not exist. The message names the artifact and lists the
 * versions that do exist (runs of consecutive versions are shortened to ranges such as {@code 1-400}), so a caller
 * can pick one. Retrying the same request fails again unless someone saves that version meanwhile.
 */
public class ArtifactNotFoundException extends InvalidSpecException {

    /** @param message what was asked for and what exists instead */
    public ArtifactNotFoundException(String message) {
        super(message);
    }

    /** The exception for a missing {@code version} of {@code name}, whose existing versions are {@code existing}. */
    static ArtifactNotFoundException forVersion(String name, int version, List<Integer> existing) {
        String what = "artifact '" + name + "' has no version " + version;
        if (existing.isEmpty()) {
            return new ArtifactNotFoundException(what + "; it does not exist (no versions)");
        }
        return new ArtifactNotFoundException(what + "; existing versions: " + ranges(existing)
                + " (latest " + existing.get(existing.size() - 1) + ")");
    }

    /** Ascending versions as a short list of ranges: [1,2,3,5,7,8] becomes "1-3, 5, 7-8". */
    static String ranges(List<Integer> ascending) {
        StringBuilder sb = new StringBuilder();
        int i = 0;
        while (i < ascending.size()) {
            int start = ascending.get(i);
            int end = start;
            while (i + 1 < ascending.size() && ascending.get(i + 1) == end + 1) {
                end = ascending.get(++i);
            }
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(start);
            if (end != start) {
                sb.append('-').append(end);
            }
            i++;
        }
        return sb.toString();
    }
}
