package dev.codeexec.artifact;

import java.io.IOException;
import java.io.InputStream;

/**
 * Reads one stored version lent as a stream by {@link ArtifactService#read}: the stream is open for the call only and
 * closed by the store.
 *
 * @param <T> what the reader makes of the bytes
 */
@FunctionalInterface
public interface ArtifactReader<T> {

    /**
     * @param content the version's bytes from the start; a store that checks integrity fails the read that reaches the
     *                end of damaged bytes with an {@link IOException}
     * @param size    the number of bytes saved
     * @return the reader's result
     * @throws IOException when reading fails; the store passes it on wrapped in an
     *                     {@link java.io.UncheckedIOException}
     */
    T read(InputStream content, long size) throws IOException;
}
