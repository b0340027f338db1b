package dev.codeexec.artifact;

import java.util.List;
import java.util.Optional;

/**
 * The contract through {@link ArtifactService}'s default methods ({@code saveStream}, {@code saveWritten},
 * {@code read}), as a store that implements only the abstract ones gets them.
 */
class InterfaceDefaultsArtifactServiceTest extends ArtifactServiceContractTest {

    @Override
    protected ArtifactService newService() {
        InMemoryArtifactService d = new InMemoryArtifactService();
        return new ArtifactService() {
            @Override
            public ArtifactRef save(String name, byte[] content, String mimeType) {
                return d.save(name, content, mimeType);
            }

            @Override
            public Optional<Artifact> load(String name) {
                return d.load(name);
            }

            @Override
            public Artifact load(String name, int version) {
                return d.load(name, version);
            }

            @Override
            public List<Integer> versions(String name) {
                return d.versions(name);
            }

            @Override
            public List<String> names() {
                return d.names();
            }

            @Override
            public void delete(String name) {
                d.delete(name);
            }
        };
    }
}
