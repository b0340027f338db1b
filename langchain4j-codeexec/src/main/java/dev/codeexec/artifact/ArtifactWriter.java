package dev.codeexec.artifact;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes the bytes of a new version for {@link ArtifactService#saveWritten}: the producer pushes, the store streams
 * them to its storage, so a version made of many sources (a snapshot's files, read one after another from a
 * workspace) is written in one pass without a copy in memory.
 */
@FunctionalInterface
public interface ArtifactWriter {

    /**
     * @param out where the version's bytes go; lent for the call only, not to be closed
     * @throws IOException when producing the bytes fails; no version is saved
     */
    void write(OutputStream out) throws IOException;
}
