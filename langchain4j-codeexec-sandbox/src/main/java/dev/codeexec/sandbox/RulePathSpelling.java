package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the path of a {@link PermissionProfile} rule is written and checked when the rule is added: the spellings a
 * rule accepts, their one normal form, and the refusals (with what to do instead) of the ones it does not.
 */
final class RulePathSpelling {

    private RulePathSpelling() {
    }

    /**
     * A rule's path as the profile stores it: an absolute host path normalised (and, for a grant, existing and outside
     * the kernel's trees), {@code ~/}-relative for no-access rules only, or a workspace-relative path normalised
     * lexically; never a glob, {@code ..} or NUL.
     *
     * @throws InvalidSpecException naming the path and the rule it breaks
     */
    static String normalize(String raw, FileAccess access) {
        if (raw == null || raw.isBlank()) {
            throw new InvalidSpecException("path (" + raw + ") must not be null or blank");
        }
        if (raw.indexOf('\0') >= 0) {
            throw new InvalidSpecException("path must not contain a NUL character");
        }
        if (PermissionProfile.isGlob(raw)) {
            throw new InvalidSpecException("'" + raw + "' is a glob, but " + describe(access)
                    + " rules take exact paths only" + (access == FileAccess.NONE
                    ? "; use withNoAccessGlobs for patterns" : "; globs are only allowed in withNoAccessGlobs"));
        }
        if (raw.startsWith("~")) {
            if (access != FileAccess.NONE || !raw.startsWith("~/") || raw.length() == 2) {
                throw new InvalidSpecException("'" + raw + "': ~/ paths (in every home directory) are only allowed in "
                        + "no-access rules; grant host paths as absolute paths");
            }
            return "~/" + lexical(raw.substring(2), raw);
        }
        if (raw.startsWith("/")) {
            for (String seg : raw.split("/")) {
                if (seg.equals("..")) {
                    throw new InvalidSpecException("path '" + raw + "' must not contain '..'");
                }
            }
            String norm = Path.of(raw).normalize().toString();
            if (access == FileAccess.WRITE && norm.equals("/")) {
                throw new InvalidSpecException("a write grant on '/' is full host access; use "
                        + "PermissionProfile.dangerFullAccess() if that is really meant");
            }
            if (access == FileAccess.WRITE) {
                for (String k : SandboxLayout.KERNEL_TREES) {
                    if (norm.equals(k) || norm.startsWith(k + "/")) {
                        throw new InvalidSpecException("write grant '" + raw + "' lies in " + k + ", whose files "
                                + "change host-wide kernel or device settings; nothing in a sandbox may write there");
                    }
                }
            }
            if (access != FileAccess.NONE && !Files.exists(Path.of(norm), LinkOption.NOFOLLOW_LINKS)) {
                throw new InvalidSpecException(describe(access) + " grant '" + raw + "' does not exist on this host; "
                        + "grants must name existing paths");
            }
            return norm;
        }
        return lexical(raw, raw);
    }

    /** Lexical normalisation of a relative path: "a//b/./c/" -> "a/b/c", "" or "./" -> "."; refuses "..". */
    private static String lexical(String rel, String raw) {
        if (rel.indexOf('\\') >= 0) {
            throw new InvalidSpecException("path '" + raw + "' must use '/' separators");
        }
        List<String> parts = new ArrayList<>();
        for (String seg : rel.split("/")) {
            if (seg.isEmpty() || seg.equals(".")) {
                continue;
            }
            if (seg.equals("..")) {
                throw new InvalidSpecException("path '" + raw + "' must not contain '..'");
            }
            parts.add(seg);
        }
        return parts.isEmpty() ? PermissionProfile.WORKSPACE_ROOT : String.join("/", parts);
    }

    /** The part of {@code path} below {@code root} ("a/b"), or null when path is not strictly below root. */
    static String childPart(String root, String path) {
        if (root.equals(path) || root.startsWith("/") != path.startsWith("/")) {
            return null;
        }
        if (root.equals(PermissionProfile.WORKSPACE_ROOT)) {
            return path;
        }
        String prefix = root.endsWith("/") ? root : root + "/";
        return path.startsWith(prefix) ? path.substring(prefix.length()) : null;
    }

    /** An access as messages name it: "no-access", "read", "write". */
    static String describe(FileAccess a) {
        return a == FileAccess.NONE ? "no-access" : a.name().toLowerCase();
    }
}
