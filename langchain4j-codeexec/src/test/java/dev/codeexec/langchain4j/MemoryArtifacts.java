package dev.codeexec.langchain4j;

import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** A minimal in-memory artifact store for tests. */
final class MemoryArtifacts implements ArtifactService {

    private final Map<String, List<Artifact>> store = new ConcurrentHashMap<>();

    @Override
    public synchronized ArtifactRef save(String name, byte[] content, String mimeType) {
        if (!name.matches("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*") || name.equals(".") || name.contains("..")) {
            throw new IllegalArgumentException("invalid name " + name);
        }
        List<Artifact> versions = store.computeIfAbsent(name, k -> new ArrayList<>());
        ArtifactRef ref = new ArtifactRef(name, versions.size() + 1);
        versions.add(new Artifact(ref, content, mimeType));
        return ref;
    }

    @Override
    public Optional<Artifact> load(String name) {
        List<Artifact> v = store.get(name);
        return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(v.size() - 1));
    }

    @Override
    public Artifact load(String name, int version) {
        List<Artifact> v = store.getOrDefault(name, List.of());
        if (version < 1 || version > v.size()) {
            throw new ArtifactNotFoundException("artifact '" + name + "' has no version " + version + " (versions: "
                    + versions(name) + ")");
        }
        return v.get(version - 1);
    }

    @Override
    public List<Integer> versions(String name) {
        List<Integer> out = new ArrayList<>();
        for (int i = 1; i <= store.getOrDefault(name, List.of()).size(); i++) {
            out.add(i);
        }
        return out;
    }

    @Override
    public List<String> names() {
        return new ArrayList<>(new TreeMap<>(store).keySet());
    }

    @Override
    public void delete(String name) {
        store.remove(name);
    }
}
