package dev.codeexec.kubernetes;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The workspace tools end to end (real AiServices, OpenAI client on WireMock) on pods of the fake cluster. */
class KubernetesWorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @Override
    protected Engine createEngine() {
        return KubernetesTesting.engine().inputRoots(List.of(inputRoot)).artifactService(artifacts).build();
    }

    /** The pod's files are compared by listing (sizes and times through {@code find}): no kernel notices. */
    @Override
    protected boolean seesRewritesThatKeepSizeAndTime() {
        return false;
    }

    /**
     * Stdin passes through the API server's and the kubelet's connections, which take a megabyte without the program
     * reading any of it (the fake's kubelet queues it); a write is refused only once they are full.
     */
    @Override
    protected boolean noticesUnreadInputAtOnce() {
        return false;
    }

    /**
     * Another workspace is another pod: no path in this one leads to it. What a link planted to reach it can name is
     * a path outside this workspace, which is what the shared scenarios need.
     */
    @Override
    protected Path hostRootOf(String rel) {
        return Path.of(PodLayout.VOLUME, "another-workspace");
    }
}
