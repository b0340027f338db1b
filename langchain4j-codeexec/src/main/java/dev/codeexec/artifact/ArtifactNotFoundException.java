package dev.codeexec.artifact;

import dev.codeexec.engine.InvalidSpecException;

/** The artifact, or the requested version of it, does not exist. The message lists the versions that do. */
public class ArtifactNotFoundException extends InvalidSpecException {

    public ArtifactNotFoundException(String message) {
        super(message);
    }
}
