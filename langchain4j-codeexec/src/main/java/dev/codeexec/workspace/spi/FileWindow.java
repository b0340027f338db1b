package dev.codeexec.workspace.spi;

import java.util.Arrays;
import java.util.Objects;

/**
 * A window of one file, as {@link WorkspaceFiles#read} returns it: the bytes read and the file's full size when it was
 * opened, so the caller can tell whether bytes follow.
 *
 * @param content the bytes read, at most the window asked for; empty at or past the end of the file
 * @param size    the file's full size in bytes when it was opened
 */
public record FileWindow(byte[] content, long size) {

    public FileWindow {
        Objects.requireNonNull(content, "content");
        if (size < 0) {
            throw new IllegalArgumentException("size (" + size + ") must not be negative");
        }
        content = content.clone();
    }

    /** A copy of the bytes read. */
    @Override
    public byte[] content() {
        return content.clone();
    }

    /** How many bytes were read. */
    public int length() {
        return content.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileWindow w && w.size == size && Arrays.equals(w.content, content);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(content) + Long.hashCode(size);
    }

    @Override
    public String toString() {
        return "FileWindow{bytes=" + content.length + ", size=" + size + "}";
    }
}
