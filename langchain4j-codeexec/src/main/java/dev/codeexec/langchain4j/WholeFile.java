package dev.codeexec.langchain4j;

import dev.codeexec.FileRef;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import java.io.ByteArrayOutputStream;

/** A whole workspace file, read through the engine's windows; for appends and artifact saves. */
record WholeFile(byte[] content, String mimeType) {

    /** Window size for whole-file reads; engines cap a window (the host file system at 16 MiB). */
    private static final int READ_CHUNK = 4 << 20;

    /**
     * Reads a whole file in windows, or returns null when it is larger than {@code max} bytes (checked before reading
     * beyond the first window).
     */
    static WholeFile read(Engine engine, Workspace ws, String path, long max) {
        FileRef first = engine.fs().readFile(ws, path, 0, (int) Math.min(READ_CHUNK, max + 1));
        if (first.sizeBytes() > max) {
            return null;
        }
        byte[] head = first.content() == null ? new byte[0] : first.content();
        if (!first.truncated()) {
            return new WholeFile(head, first.mimeType());
        }
        ByteArrayOutputStream all = new ByteArrayOutputStream((int) first.sizeBytes());
        all.writeBytes(head);
        long offset = head.length;
        while (true) {
            FileRef next = engine.fs().readFile(ws, path, offset, READ_CHUNK);
            byte[] b = next.content() == null ? new byte[0] : next.content();
            all.writeBytes(b);
            offset += b.length;
            if (offset > max) {
                return null; // grew while being read
            }
            if (!next.truncated() || b.length == 0) {
                return new WholeFile(all.toByteArray(), first.mimeType());
            }
        }
    }
}
