package dev.codeexec.artifact;

import java.util.Arrays;
import java.util.Objects;

/**
 * One stored version of an artifact: its exact reference, its bytes and its MIME type. Immutable: the bytes are
 * copied in and copied out, so holding or changing an array never changes the artifact.
 */
public final class Artifact {

    private final ArtifactRef ref;
    private final byte[] content;
    private final String mimeType;

    /**
     * @param ref      the exact reference of this version; must carry a version
     * @param content  the bytes, copied
     * @param mimeType the MIME type; null means {@code application/octet-stream}
     */
    public Artifact(ArtifactRef ref, byte[] content, String mimeType) {
        this.ref = Objects.requireNonNull(ref, "ref");
        this.content = Objects.requireNonNull(content, "content").clone();
        this.mimeType = mimeType == null ? "application/octet-stream" : mimeType;
    }

    /** @return the exact reference of this version ({@code artifact://name@version}) */
    public ArtifactRef ref() {
        return ref;
    }

    /** @return a copy of the bytes */
    public byte[] content() {
        return content.clone();
    }

    /** @return the number of bytes, without copying them */
    public int size() {
        return content.length;
    }

    /** @return the MIME type stored with this version, never null */
    public String mimeType() {
        return mimeType;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Artifact a && a.ref.equals(ref) && Arrays.equals(a.content, content)
                && a.mimeType.equals(mimeType);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ref, Arrays.hashCode(content), mimeType);
    }

    @Override
    public String toString() {
        return "Artifact{" + ref + ", bytes=" + content.length + ", mimeType=" + mimeType + "}";
    }
}
