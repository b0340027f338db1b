package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.lang.reflect.Field;
import java.net.URI;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;

/**
 * A Kubernetes cluster for tests, on this host: fabric8's mock API server in CRUD mode (every object is stored,
 * listed, watched and deleted as by an API server) with a {@link FakeKubelet} that runs each created pod as a
 * {@link FakePod} and answers {@code pods/exec} over a real websocket with the real channel protocol. The engine's
 * real fabric8 client, exec client and tar-over-exec can thus be tested end to end.
 *
 * <pre>{@code
 * try (FakeCluster cluster = FakeCluster.start()) {      // v5 and v4 exec
 *     KubernetesClient client = cluster.client();          // namespace "test"
 *     ... client.pods().resource(pod).create(); ... waitUntilReady ...
 *     cluster.kubelet().breakNextExec();                   // the next exec stream breaks mid-run
 *     cluster.kubelet().unpullable().add("bad:image");     // pods of that image stay Pending (ErrImagePull)
 *     cluster.kubelet().evict("test", "pod-name");         // or oomKill(...)
 *     cluster.kubelet().execs("pod-name"); cluster.kubelet().podCreations();
 * }
 * }</pre>
 *
 * <p>Subprotocols: the mock server's Vert.x handshake picks the websocket subprotocol from a list fixed in
 * {@code MockWebServer} (v1 to v4 only, no v5, and no per-response choice: the {@link
 * io.fabric8.mockwebserver.http.MockResponse}'s headers are not used on an upgrade). This class rewrites that list,
 * only while its server starts (the server copies it), to the protocols of this cluster: {@code v5.channel.k8s.io}
 * and {@code v4.channel.k8s.io}, or v4 alone with {@link #startV4Only()}. The kubelet picks the same protocol the
 * handshake echoes (the client's first supported offer) and refuses a request offering none (403, as the real
 * handshake does). Clusters must not be started concurrently with other mock servers in the same JVM (JUnit runs
 * test classes one after another by default).
 *
 * <p>Thread-safe; {@link #close()} stops every pod, the client and the server.
 */
final class FakeCluster implements AutoCloseable {

    /** The namespace the client uses. */
    static final String NAMESPACE = "test";

    private static final Object STARTING = new Object();

    private final KubernetesMockServer server;
    private final FakeKubelet kubelet;
    private final KubernetesClient client;
    private final Set<String> protocols;

    private FakeCluster(KubernetesMockServer server, FakeKubelet kubelet, Set<String> protocols) {
        this.server = server;
        this.kubelet = kubelet;
        this.protocols = protocols;
        this.client = server.createClient().inNamespace(NAMESPACE);
    }

    /** Whether this host can run the cluster's pods (see {@link FakePod#available()}). */
    static boolean available() {
        return FakePod.available();
    }

    /** Starts a cluster whose exec speaks v5 and v4. */
    static FakeCluster start() {
        return start(List.of(FakeExecSocket.V5, FakeExecSocket.V4));
    }

    /** Starts a cluster whose exec speaks only v4 (as before Kubernetes 1.30): an offer of v5 alone gets 403. */
    static FakeCluster startV4Only() {
        return start(List.of(FakeExecSocket.V4));
    }

    private static FakeCluster start(List<String> protocols) {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        KubernetesMixedDispatcher store = new KubernetesMixedDispatcher(responses);
        FakeKubelet kubelet = new FakeKubelet(store, new LinkedHashSet<>(protocols));
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, kubelet,
                false);
        synchronized (STARTING) {
            String[] list = subprotocolList();
            String[] saved = list.clone();
            for (int i = 0; i < list.length; i++) {
                list[i] = protocols.get(Math.min(i, protocols.size() - 1));
            }
            try {
                server.init();
            } finally {
                System.arraycopy(saved, 0, list, 0, list.length);
            }
        }
        return new FakeCluster(server, kubelet, Set.copyOf(protocols));
    }

    /** A fabric8 client of this cluster, in {@link #NAMESPACE}. Closed with the cluster. */
    KubernetesClient client() {
        return client;
    }

    /** A new fabric8 client of this cluster, in no particular namespace, for code that owns (and closes) its client. */
    KubernetesClient newClient() {
        return server.createClient();
    }

    /** The mock API server, for expectations beyond the CRUD store ({@code server().expect()...}). */
    KubernetesMockServer server() {
        return server;
    }

    /** Lets the store keep objects of a custom resource, such as agent-sandbox's {@code SandboxClaim}. */
    void expectCustomResource(CustomResourceDefinitionContext context) {
        server.expectCustomResource(context);
    }

    /** The node: its pods, counters and failure switches. */
    FakeKubelet kubelet() {
        return kubelet;
    }

    /** The running fake pod {@code name} in {@link #NAMESPACE}, if it runs. */
    Optional<FakePod> pod(String name) {
        return kubelet.pod(NAMESPACE, name);
    }

    /** The API server's base URL ({@code http://localhost:port/}). */
    URI url() {
        return URI.create(server.url("/"));
    }

    /** The websocket subprotocols this cluster's exec accepts. */
    Set<String> protocols() {
        return protocols;
    }

    @Override
    public void close() {
        try {
            client.close();
        } finally {
            kubelet.stopAll();
            server.destroy();
        }
    }

    /** {@code MockWebServer}'s subprotocol list, the array its {@code start} hands to Vert.x. */
    private static String[] subprotocolList() {
        try {
            Field f = MockWebServer.class.getDeclaredField("SUPPORTED_WEBSOCKET_SUB_PROTOCOLS");
            f.setAccessible(true);
            return (String[]) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the mock web server's subprotocol list moved", e);
        }
    }
}
