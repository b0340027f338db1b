package dev.codeexec.langchain4j;

import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code workspace_stage_artifact}: copies an artifact of the conversation's scope into {@code work/} (by default
 * {@code work/inputs/<name>}). Only artifact references are accepted: the model cannot stage host paths.
 */
final class StageArtifactTool implements ToolHandler {

    private final ToolArtifacts artifacts;

    StageArtifactTool(ToolArtifacts artifacts) {
        this.artifacts = artifacts;
    }

    /** Where an artifact is staged: the model's {@code to}, else {@code work/inputs/<its file name>}. */
    static String target(ArtifactRef ref, String to) {
        String base = ref.name().substring(ref.name().lastIndexOf('/') + 1);
        return to == null || to.isBlank() ? AttachmentStager.INPUTS + "/" + base : ToolPaths.normalizeFile(to, "to");
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        ArtifactRef ref = ref(args.requiredString("ref", "artifact", "name").strip());
        String target = target(ref, args.string("to", "path"));
        if (!ToolPaths.under(target, "work")) {
            throw new InvalidArgument("'to' must be under work/ (inputs belong in work/inputs), got "
                    + ToolArguments.echo(target));
        }
        ArtifactService service = artifacts.service(call.engine());
        String prefix = artifacts.prefix(call.key());
        ArtifactRef stored = new ArtifactRef(prefix + ref.name(), ref.version());
        return ToolWork.changing(ws -> {
            call.engine().fs().checkWritableByPrograms(ws, target); // the rules programs obey
            Artifact a;
            try {
                a = service.load(stored);
            } catch (ArtifactNotFoundException e) {
                throw new ToolRefusal(ToolErrorKind.NOT_FOUND, ErrorText.clause(ToolArtifacts.unscoped(
                        e.getMessage(), prefix)) + ". Nothing was staged.");
            } catch (IllegalArgumentException e) {
                throw new InvalidSpecException(ToolArtifacts.unscoped(e.getMessage(), prefix) + ". Nothing was staged.",
                        e);
            }
            ArtifactRef shown = ToolArtifacts.unscoped(a.ref(), prefix);
            if (a.size() > artifacts.maxBytes()) {
                throw new ToolRefusal(ToolErrorKind.TOO_LARGE, shown + " is " + a.size() + " bytes; the limit is "
                        + artifacts.maxBytes() + ". Nothing was staged.");
            }
            call.engine().fs().putFiles(ws, List.of(PutFile.of(target, a.content())));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("artifact", shown.toString());
            attrs.put("path", target);
            attrs.put("size_bytes", (long) a.size());
            attrs.put("files_changed", List.of(target));
            return ToolResult.ok("staged " + shown + " at " + target + " (" + a.size() + " bytes)", attrs);
        });
    }

    /** The model's reference, checked: an {@code artifact://} reference with a relative name. */
    static ArtifactRef ref(String raw) {
        if (raw.contains("://") && !ArtifactRef.isArtifactRef(raw)) {
            throw new InvalidArgument("'ref' must be an artifact reference such as artifact://report.csv@2, got "
                    + ToolArguments.echo(raw));
        }
        ArtifactRef ref;
        try {
            ref = ArtifactRef.parse(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgument("'ref' " + ToolArguments.echo(raw) + " is not an artifact reference ("
                    + e.getMessage() + ")");
        }
        if (!ArtifactScope.isRelativeName(ref.name())) {
            throw new InvalidArgument("'ref' must name an artifact by a relative name such as artifact://report.csv"
                    + " (no empty, '.' or '..' segment), got " + ToolArguments.echo(raw));
        }
        return ref;
    }
}
