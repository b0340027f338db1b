package dev.codeexec.artifact;

import java.util.Optional;

/**
 * Something configured with an artifact store: the engines, whose {@code artifact://} inputs and saved outputs use
 * it. The LangChain4j tools take the store from here when the application gave them none.
 */
public interface ArtifactSource {

    /** The artifact store, when one was configured. */
    Optional<ArtifactService> artifacts();
}
