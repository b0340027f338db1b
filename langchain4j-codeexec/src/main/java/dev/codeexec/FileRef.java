package dev.codeexec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A file read from a workspace: its name, type, size and (when inlined) content.
 */
public final class FileRef {

    private final String name;
    private final String mimeType;
    private final byte[] content;
    private final long sizeBytes;
    private final boolean truncated;
    private final String savedAs;

    /**
     * @param name      workspace-relative path
     * @param mimeType  MIME type guessed from the name and content
     * @param content   the bytes read (at most the byte limit), or null when not inlined
     * @param sizeBytes the file's full size on disk
     * @param truncated true when {@code content} holds less than the whole file
     * @param savedAs   the artifact reference ({@code artifact://name@version}) when saved, else null
     */
    public FileRef(String name, String mimeType, byte[] content, long sizeBytes, boolean truncated, String savedAs) {
        this.name = Objects.requireNonNull(name, "name");
        this.mimeType = mimeType == null ? "application/octet-stream" : mimeType;
        this.content = content == null ? null : content.clone();
        this.sizeBytes = sizeBytes;
        this.truncated = truncated;
        this.savedAs = savedAs;
    }

    public String name() {
        return name;
    }

    public String mimeType() {
        return mimeType;
    }

    /** A copy of the content read, or null when not inlined. */
    public byte[] content() {
        return content == null ? null : content.clone();
    }

    /** The content decoded as UTF-8, or null when not inlined. */
    public String contentAsString() {
        return content == null ? null : new String(content, StandardCharsets.UTF_8);
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    public boolean truncated() {
        return truncated;
    }

    public String savedAs() {
        return savedAs;
    }

    /** A copy that records the artifact reference it was saved as. */
    public FileRef withSavedAs(String ref) {
        return new FileRef(name, mimeType, content, sizeBytes, truncated, ref);
    }

    /** A copy without content. */
    public FileRef withoutContent() {
        return new FileRef(name, mimeType, null, sizeBytes, truncated, savedAs);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileRef f && f.name.equals(name) && f.mimeType.equals(mimeType)
                && Arrays.equals(f.content, content) && f.sizeBytes == sizeBytes && f.truncated == truncated
                && Objects.equals(f.savedAs, savedAs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, mimeType, Arrays.hashCode(content), sizeBytes, truncated, savedAs);
    }

    @Override
    public String toString() {
        return "FileRef{name=" + name + ", mimeType=" + mimeType + ", sizeBytes=" + sizeBytes + ", inline="
                + (content == null ? "no" : content.length + "B") + ", truncated=" + truncated
                + (savedAs == null ? "" : ", savedAs=" + savedAs) + "}";
    }
}
