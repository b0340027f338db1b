package dev.codeexec.artifact;

import java.util.Arrays;
import java.util.Objects;

/** One stored version of an artifact. */
public final class Artifact {

    private final ArtifactRef ref;
    private final byte[] content;
    private final String mimeType;

    public Artifact(ArtifactRef ref, byte[] content, String mimeType) {
        this.ref = Objects.requireNonNull(ref, "ref");
        this.content = Objects.requireNonNull(content, "content").clone();
        this.mimeType = mimeType == null ? "application/octet-stream" : mimeType;
    }

    /** The exact reference of this version ({@code artifact://name@version}). */
    public ArtifactRef ref() {
        return ref;
    }

    /** A copy of the bytes. */
    public byte[] content() {
        return content.clone();
    }

    public int size() {
        return content.length;
    }

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
