package dev.codeexec.engine;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A file to write into a workspace. Writes are atomic (a temporary file renamed into place) and create missing
 * parent directories.
 */
public final class PutFile {

    /** {@code 0644}: the mode when none is given. */
    public static final int DEFAULT_MODE = 0644;

    private final String path;
    private final byte[] content;
    private final int mode;

    private PutFile(String path, byte[] content, int mode) {
        if (path == null || path.isBlank()) {
            throw new InvalidSpecException("path must not be null or blank");
        }
        Objects.requireNonNull(content, "content");
        if (mode < 0 || mode > 0777) {
            throw new InvalidSpecException("mode (" + Integer.toOctalString(mode) + ") must be within 0..0777");
        }
        this.path = path;
        this.content = content.clone();
        this.mode = mode;
    }

    /** A file with the given bytes and mode 0644. */
    public static PutFile of(String path, byte[] content) {
        return new PutFile(path, content, DEFAULT_MODE);
    }

    /** A UTF-8 text file with mode 0644. */
    public static PutFile of(String path, String text) {
        return new PutFile(path, text.getBytes(StandardCharsets.UTF_8), DEFAULT_MODE);
    }

    /** A file with the given bytes and Unix permission bits (for example {@code 0755}). */
    public static PutFile of(String path, byte[] content, int mode) {
        return new PutFile(path, content, mode);
    }

    /** Workspace-relative path. */
    public String path() {
        return path;
    }

    /** A copy of the content. */
    public byte[] content() {
        return content.clone();
    }

    /** Length of the content in bytes. */
    public int size() {
        return content.length;
    }

    /** Unix permission bits. */
    public int mode() {
        return mode;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PutFile p && p.path.equals(path) && p.mode == mode && Arrays.equals(p.content, content);
    }

    @Override
    public int hashCode() {
        return Objects.hash(path, mode, Arrays.hashCode(content));
    }

    @Override
    public String toString() {
        return "PutFile{path=" + path + ", bytes=" + content.length + ", mode=" + Integer.toOctalString(mode) + "}";
    }
}
