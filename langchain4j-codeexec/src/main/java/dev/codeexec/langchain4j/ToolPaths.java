package dev.codeexec.langchain4j;

import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.util.List;
import java.util.Map;

/**
 * The tools' reading of path arguments, before the engine's resolver checks them against the real file system:
 * friendly prefixes ({@code $WORK_DIR/x}), the directories a tool may touch, and messages a model can act on. The
 * lexical rules themselves (no absolute path, no {@code ..}) are the core resolver's.
 */
final class ToolPaths {

    private static final Map<String, String> VARIABLES = Map.of(
            "WORKSPACE_DIR", ".", "WORK_DIR", "work", "OUTPUT_DIR", "out", "SKILLS_DIR", "skills");

    /** Where {@code workspace_save_artifact} may read from. */
    static final List<String> ARTIFACT_ROOTS = List.of("work", "out", "runs");

    private ToolPaths() {
    }

    /**
     * A workspace-relative path in normal form ({@code "."} for the root).
     *
     * @throws InvalidArgument naming {@code argName} when the path is absolute, climbs out with {@code ..} or is
     *                         otherwise unusable
     */
    static String normalize(String raw, String argName) {
        if (raw == null || raw.isBlank()) {
            return ".";
        }
        String p = expandVariable(raw.strip(), argName);
        if (p.indexOf('\0') >= 0 || p.chars().anyMatch(c -> c < 0x20)) {
            throw new InvalidArgument("'" + argName + "' must not contain control characters");
        }
        if (p.startsWith("/") || p.startsWith("~") || (p.length() > 1 && p.charAt(1) == ':')) {
            throw new InvalidArgument("'" + argName + "' must be relative to the workspace root (for example "
                    + "'work' or 'out/report.txt'), got " + ToolArguments.echo(raw)
                    + "; the workspace is the only file system the tools can reach");
        }
        if (p.indexOf('\\') >= 0) {
            throw new InvalidArgument("'" + argName + "' must use '/' as separator, got " + ToolArguments.echo(raw));
        }
        StringBuilder out = new StringBuilder();
        for (String seg : p.split("/")) {
            if (seg.isEmpty() || seg.equals(".")) {
                continue;
            }
            if (seg.equals("..")) {
                throw new InvalidArgument("'" + argName + "' must stay inside the workspace ('..' is not allowed), got "
                        + ToolArguments.echo(raw));
            }
            if (out.length() > 0) {
                out.append('/');
            }
            out.append(seg);
        }
        return out.length() == 0 ? "." : out.toString();
    }

    /** Like {@link #normalize} but refuses the workspace root itself. */
    static String normalizeFile(String raw, String argName) {
        String p = normalize(raw, argName);
        if (p.equals(".")) {
            throw new InvalidArgument("'" + argName + "' must name a file, for example 'work/data.csv'");
        }
        return p;
    }

    static boolean isGlob(String p) {
        return p.indexOf('*') >= 0 || p.indexOf('?') >= 0 || p.indexOf('[') >= 0;
    }

    /** True when {@code p} (normal form) is {@code root} or inside it. */
    static boolean under(String p, String root) {
        return p.equals(root) || p.startsWith(root + "/");
    }

    private static String expandVariable(String p, String argName) {
        if (!p.startsWith("$")) {
            return p;
        }
        String body = p.substring(1);
        boolean braced = body.startsWith("{");
        int end;
        String name;
        if (braced) {
            end = body.indexOf('}');
            if (end < 0) {
                throw new InvalidArgument("'" + argName + "' has an unterminated ${...}");
            }
            name = body.substring(1, end);
            end++;
        } else {
            end = 0;
            while (end < body.length() && (Character.isLetterOrDigit(body.charAt(end)) || body.charAt(end) == '_')) {
                end++;
            }
            name = body.substring(0, end);
        }
        String mapped = VARIABLES.get(name);
        if (mapped == null) {
            throw new InvalidArgument("'" + argName + "' may start with $WORKSPACE_DIR, $WORK_DIR, $OUTPUT_DIR or "
                    + "$SKILLS_DIR only, got " + ToolArguments.echo(p));
        }
        String rest = body.substring(end);
        if (!rest.isEmpty() && !rest.startsWith("/")) {
            throw new InvalidArgument("'" + argName + "' must have '/' after $" + name + ", got " + ToolArguments.echo(p));
        }
        return mapped + rest;
    }
}
