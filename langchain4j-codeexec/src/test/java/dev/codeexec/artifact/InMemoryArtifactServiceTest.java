package dev.codeexec.artifact;

class InMemoryArtifactServiceTest extends ArtifactServiceContractTest {

    @Override
    protected ArtifactService newService() {
        return new InMemoryArtifactService();
    }
}
