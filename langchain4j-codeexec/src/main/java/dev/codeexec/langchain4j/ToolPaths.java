package dev.codeexec.langchain4j;

import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceGlob;
import java.util.List;

/**
 * The tools' reading of path arguments, before the engine's resolver checks them against the real file system: the
 * lexical rules of {@link PathResolver#normalize} (no absolute path, no {@code ..}; {@code $WORK_DIR/x} style
 * prefixes expanded), the directories a tool may touch, and messages a model can act on.
 */
final class ToolPaths {

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
        if (raw.chars().anyMatch(c -> c < 0x20 && c != '\t')) {
            throw new InvalidArgument("'" + argName + "' must not contain control characters");
        }
        try {
            return PathResolver.normalize(raw);
        } catch (PathEscapeException e) {
            throw new InvalidArgument("'" + argName + "' is refused: " + e.getMessage()
                    + " (the workspace is the only file system these tools reach)");
        } catch (InvalidSpecException e) {
            throw new InvalidArgument("'" + argName + "': " + e.getMessage());
        }
    }

    /** Like {@link #normalize} but refuses the workspace root itself. */
    static String normalizeFile(String raw, String argName) {
        String p = normalize(raw, argName);
        if (p.equals(".")) {
            throw new InvalidArgument("'" + argName + "' must name a file, for example 'work/data.csv'");
        }
        return p;
    }

    /** True when {@code p} has glob syntax ({@code * ? [ {}), read as the workspace's one glob syntax reads it. */
    static boolean isGlob(String p) {
        return WorkspaceGlob.isGlob(p);
    }

    /** True when {@code p} (normal form) is {@code root} or inside it. */
    static boolean under(String p, String root) {
        return p.equals(root) || p.startsWith(root + "/");
    }
}
