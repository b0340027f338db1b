package dev.codeexec.engine;

import java.io.IOException;
import java.io.InputStream;

/**
 * Receives the files of {@link WorkspaceFS#readFiles}, one at a time, each one's content lent for the call only:
 * the visitor reads as much as it wants and does not close the stream.
 */
@FunctionalInterface
public interface FileContentVisitor {

    /**
     * @param path    the path as given to {@link WorkspaceFS#readFiles}
     * @param size    the file's size when it was opened
     * @param content the file's bytes from the start, lent for this call
     * @return true to go on with the next file, false to stop
     * @throws IOException when the visitor fails; it ends the read and is reported as the file system's failure
     */
    boolean file(String path, long size, InputStream content) throws IOException;
}
