package dev.codeexec.langchain4j;

import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code workspace_save_artifact}: saves a file under {@code work/}, {@code out/} or {@code runs/} as a durable
 * artifact in the conversation's scope, and answers with the {@code artifact://} reference the model can stage later.
 */
final class SaveArtifactTool implements ToolHandler {

    private final ToolArtifacts artifacts;

    SaveArtifactTool(ToolArtifacts artifacts) {
        this.artifacts = artifacts;
    }

    /** The artifact name of a save: the model's {@code name}, else the file's name. */
    static String artifactName(String path, String name) {
        return name == null || name.isBlank() ? path.substring(path.lastIndexOf('/') + 1) : name.strip();
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob");
        }
        if (ToolPaths.ARTIFACT_ROOTS.stream().noneMatch(r -> ToolPaths.under(path, r) && !path.equals(r))) {
            throw new InvalidArgument("'path' must be a file under work/, out/ or runs/, got "
                    + ToolArguments.echo(path));
        }
        String artifactName = artifactName(path, args.string("name"));
        if (!ArtifactScope.isRelativeName(artifactName)) {
            throw new InvalidArgument("'name' must be a relative artifact name such as 'report.csv' or 'q1/report.csv'"
                    + " (no empty, '.' or '..' segment), got " + ToolArguments.echo(artifactName));
        }
        ArtifactService service = artifacts.service(call.engine());
        String prefix = artifacts.prefix(call.key());
        return ToolWork.reading(ws -> {
            ToolArtifacts.SavedArtifact saved;
            try {
                saved = artifacts.save(call.engine(), ws, service, path, prefix + artifactName);
            } catch (PathEscapeException e) {
                throw new PathEscapeException(ToolArtifacts.unscoped(e.getMessage(), prefix), e);
            } catch (InvalidSpecException e) {
                throw new InvalidSpecException(ToolArtifacts.unscoped(e.getMessage(), prefix), e);
            }
            ArtifactRef shown = ToolArtifacts.unscoped(saved.ref(), prefix);
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("artifact", shown.toString());
            attrs.put("version", shown.version());
            attrs.put("size_bytes", saved.sizeBytes());
            return ToolResult.ok("saved " + path + " as " + shown + " (" + saved.sizeBytes() + " bytes, "
                    + saved.mimeType() + "). The reference stays valid after this workspace is gone.", attrs);
        });
    }
}
