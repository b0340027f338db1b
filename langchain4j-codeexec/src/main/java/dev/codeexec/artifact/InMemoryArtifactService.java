package dev.codeexec.artifact;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * An {@link ArtifactService} that keeps every version in this JVM's heap. Nothing survives the process, and nothing
 * bounds the memory it uses: use it for tests and throw-away runs, and {@link FileSystemArtifactService} for
 * anything that must last.
 *
 * <p>Same name rules, versioning and messages as every store in this package. Thread-safe: saves of one name are
 * serialised (they get consecutive versions); reads never block.
 *
 * <pre>{@code
 * ArtifactService artifacts = new InMemoryArtifactService();
 * ArtifactRef ref = artifacts.save("report.md", bytes, "text/markdown");   // artifact://report.md@1
 * }</pre>
 */
public final class InMemoryArtifactService implements ArtifactService {

    /**
     * Name to versions. A save runs inside {@link ConcurrentHashMap#compute}, which is atomic per key, so it and
     * a delete of the same name never interleave; the inner map is concurrent so readers need no lock.
     */
    private final Map<String, NavigableMap<Integer, Artifact>> store = new ConcurrentHashMap<>();

    /** An empty store. */
    public InMemoryArtifactService() {
    }

    /** Collects the writer's bytes in memory (where this store keeps them anyway), then saves them. */
    @Override
    public ArtifactRef saveWritten(String name, ArtifactWriter writer, String mimeType) {
        ArtifactNames.validate(name);
        ArtifactNames.mimeType(mimeType);
        Objects.requireNonNull(writer, "writer");
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            writer.write(out);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return save(name, out.toByteArray(), mimeType);
    }

    @Override
    public ArtifactRef save(String name, byte[] content, String mimeType) {
        ArtifactNames.validate(name);
        Objects.requireNonNull(content, "content");
        String mime = ArtifactNames.mimeType(mimeType);
        ArtifactRef[] saved = new ArtifactRef[1];
        store.compute(name, (key, versions) -> {
            NavigableMap<Integer, Artifact> v = versions == null ? new ConcurrentSkipListMap<>() : versions;
            int last = v.isEmpty() ? 0 : v.lastKey();
            if (last == Integer.MAX_VALUE) {
                throw new IllegalStateException("artifact '" + name + "' has reached the highest version number");
            }
            ArtifactRef ref = new ArtifactRef(name, last + 1);
            v.put(ref.version(), new Artifact(ref, content, mime)); // Artifact copies the bytes
            saved[0] = ref;
            return v;
        });
        return saved[0];
    }

    @Override
    public Optional<Artifact> load(String name) {
        ArtifactNames.validate(name);
        NavigableMap<Integer, Artifact> v = store.get(name);
        if (v == null) {
            return Optional.empty();
        }
        Map.Entry<Integer, Artifact> last = v.lastEntry();
        return last == null ? Optional.empty() : Optional.of(last.getValue());
    }

    @Override
    public Artifact load(String name, int version) {
        ArtifactNames.validate(name);
        NavigableMap<Integer, Artifact> v = store.get(name);
        Artifact a = v == null ? null : v.get(version);
        if (a == null) {
            throw ArtifactNotFoundException.forVersion(name, version, versions(name));
        }
        return a;
    }

    @Override
    public List<Integer> versions(String name) {
        ArtifactNames.validate(name);
        NavigableMap<Integer, Artifact> v = store.get(name);
        return v == null ? List.of() : List.copyOf(v.keySet());
    }

    @Override
    public List<String> names() {
        List<String> names = new ArrayList<>();
        store.forEach((name, v) -> {
            if (!v.isEmpty()) {
                names.add(name);
            }
        });
        names.sort(null);
        return List.copyOf(names);
    }

    @Override
    public void delete(String name) {
        ArtifactNames.validate(name);
        store.remove(name);
    }

    @Override
    public String toString() {
        return "InMemoryArtifactService{names=" + store.size() + "}";
    }
}
