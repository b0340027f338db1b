package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * The fake cluster ({@link FakeCluster}) as the benchmarks module sees it, through this module's test jar: start it,
 * hand its client to a {@link KubernetesEngine}, and run a command in one of its pods directly (nsenter into the
 * pod's namespaces, no API server, no websocket), the raw baseline of an exec.
 */
public final class FakeClusterHandle implements AutoCloseable {

    private final FakeCluster cluster;

    private FakeClusterHandle(FakeCluster cluster) {
        this.cluster = cluster;
    }

    /** Whether this host can run the fake cluster's pods (bubblewrap, nsenter, root). */
    public static boolean available() {
        return FakeCluster.available();
    }

    /** Starts a fake cluster whose exec speaks v5 and v4. */
    public static FakeClusterHandle start() {
        return new FakeClusterHandle(FakeCluster.start());
    }

    /** Its client (namespace {@code test}); closed with the cluster. */
    public KubernetesClient client() {
        return cluster.client();
    }

    /**
     * Runs {@code argv} in pod {@code pod} directly in its namespaces, as its user.
     *
     * @return the exit status
     */
    public int execDirect(String pod, List<String> argv) throws IOException {
        FakePod p = cluster.pod(pod).orElseThrow(() -> new IllegalArgumentException("no pod " + pod));
        return p.exec(argv, null, OutputStream.nullOutputStream(), OutputStream.nullOutputStream());
    }

    /** The pod of a workspace of {@code engine}. */
    public static String podOf(KubernetesEngine engine, dev.codeexec.engine.Workspace ws) {
        return engine.workspaces().pod(ws).pod();
    }

    @Override
    public void close() {
        cluster.close();
    }
}
