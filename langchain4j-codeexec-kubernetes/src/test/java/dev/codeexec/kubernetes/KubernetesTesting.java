package dev.codeexec.kubernetes;

import dev.codeexec.testing.Requirements;

/**
 * What the engine-level Kubernetes tests need: one {@link FakeCluster} for the whole test run (pods are bubblewrap
 * namespaces of this host, the API server fabric8's mock, exec the real websocket protocol), started on first use and
 * stopped when the JVM exits, and engines built on its client.
 */
final class KubernetesTesting {

    /** The image the pods name; the fake kubelet runs every pod on this host's {@code /usr}, whatever the name. */
    static final String IMAGE = "codeexec-python:bookworm";

    private static FakeCluster cluster;

    private KubernetesTesting() {
    }

    /** Skips (or fails in strict mode) where the fake cluster's pods cannot run: bubblewrap and root are needed. */
    static void requireCluster() {
        Requirements.require(FakeCluster.available(), "bubblewrap, nsenter and root, for the fake cluster's pods");
    }

    /** The shared cluster (v5 and v4 exec). */
    static synchronized FakeCluster cluster() {
        requireCluster();
        if (cluster == null) {
            cluster = FakeCluster.start();
            FakeCluster c = cluster;
            Runtime.getRuntime().addShutdownHook(new Thread(c::close, "fake-cluster-stop"));
        }
        return cluster;
    }

    /** An engine on the shared cluster, hardened defaults, no sweep of other engines' pods. */
    static KubernetesEngine.Builder engine() {
        return engine(cluster());
    }

    /** An engine on {@code c}. */
    static KubernetesEngine.Builder engine(FakeCluster c) {
        return KubernetesEngine.builder().client(c.client()).image(IMAGE).sweepLeftovers(false);
    }
}
