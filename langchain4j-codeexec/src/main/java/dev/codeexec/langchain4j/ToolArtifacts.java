package dev.codeexec.langchain4j;

import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.ArtifactSource;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Workspace;
import java.util.Optional;

/**
 * The artifact store as the tools and {@link WorkspaceIO} use it: which store (the configured one, else the engine's),
 * the conversation's {@link ArtifactScope} prefix, saving one workspace file within the size limit, and showing the
 * model names without its prefix.
 */
final class ToolArtifacts {

    private final ArtifactService configured;
    private final ArtifactScope scope;
    private final long maxBytes;

    /** @param configured the application's store, or null to use the engine's */
    ToolArtifacts(ArtifactService configured, ArtifactScope scope, long maxBytes) {
        this.configured = configured;
        this.scope = scope;
        this.maxBytes = maxBytes;
    }

    /** A file saved as an artifact. */
    record SavedArtifact(ArtifactRef ref, long sizeBytes, String mimeType) {
    }

    /**
     * The store artifacts of a call on {@code engine} go to.
     *
     * @throws ToolRefusal {@code unsupported} when neither the application nor the engine has one
     */
    ArtifactService service(Engine engine) {
        if (configured != null) {
            return configured;
        }
        Optional<ArtifactService> fromEngine = engine instanceof ArtifactSource source ? source.artifacts()
                : Optional.empty();
        return fromEngine.orElseThrow(() -> new ToolRefusal(ToolErrorKind.UNSUPPORTED, "no artifact store is "
                + "configured in this application, so files cannot be saved as artifacts. Tell the user where the file "
                + "is in the workspace instead."));
    }

    /** Whether {@link #service} has a store for calls on {@code engine}. */
    boolean available(Engine engine) {
        return configured != null || engine instanceof ArtifactSource source && source.artifacts().isPresent();
    }

    /** The prefix of a workspace key's artifacts under the configured scope. */
    String prefix(String key) {
        return scope.prefix(key);
    }

    /** The largest file saved as or staged from an artifact. */
    long maxBytes() {
        return maxBytes;
    }

    /**
     * Saves one workspace file as an artifact; the caller holds the workspace lock.
     *
     * @param name the store's full name (prefix included)
     * @throws InvalidSpecException when the file is missing, too large, or the name is not a valid artifact name
     */
    SavedArtifact save(Engine engine, Workspace ws, ArtifactService service, String path, String name) {
        WholeFile f = WholeFile.read(engine, ws, path, maxBytes);
        if (f == null) {
            throw new InvalidSpecException(path + " is larger than the " + maxBytes + " bytes artifacts are limited "
                    + "to. Nothing was saved.");
        }
        try {
            ArtifactRef ref = service.save(name, f.content(), f.mimeType());
            return new SavedArtifact(ref, f.content().length, f.mimeType());
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException("artifact name " + ToolArguments.echo(name) + " is not valid ("
                    + e.getMessage() + "). Nothing was saved.");
        }
    }

    /** The reference the model sees: the stored name without the conversation's prefix. */
    static ArtifactRef unscoped(ArtifactRef stored, String prefix) {
        if (!stored.name().startsWith(prefix)) {
            // A store that renamed the artifact: never show the model a name outside its scope.
            throw new IllegalStateException("the artifact store answered with a name outside the conversation's scope");
        }
        return new ArtifactRef(stored.name().substring(prefix.length()), stored.version());
    }

    /** A store's message without the conversation's prefix, so the model sees the names it used. */
    static String unscoped(String message, String prefix) {
        return prefix.isEmpty() || message == null ? message : message.replace(prefix, "");
    }
}
