package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.CustomResourceAware;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fake cluster's node: a {@link Dispatcher} in front of fabric8's CRUD store ({@link KubernetesMixedDispatcher})
 * that runs pods and answers {@code pods/exec} for real. The store keeps every object; this class adds what a
 * scheduler and a kubelet would do to pods.
 *
 * <ul>
 *   <li>A created pod is stored first (the create answers as the store does, the pod without status), then started
 *   as a {@link FakePod} on a worker thread (user and group from {@code runAsUser}/{@code runAsGroup}, the
 *   container's overriding the pod's; one fresh {@code emptyDir} per volume mount), and its status set through the
 *   store's {@code /status} subresource to {@code Running} with {@code Ready}, {@code ContainersReady} and a ready,
 *   running container status, so watches see it and {@code waitUntilReady} works.</li>
 *   <li>A pod whose image is in {@link #unpullable()} stays {@code Pending} with its container waiting
 *   ({@code ErrImagePull}); {@link #evict} and {@link #oomKill} end a running pod's processes and set the status a
 *   kubelet would ({@code Failed}/{@code Evicted}; container terminated {@code OOMKilled}, exit 137).</li>
 *   <li>Any pod deletion (by name, by label selector, a collection) stops the FakePods of the pods no longer
 *   stored. Deletion is immediate (no grace period, no {@code deletionTimestamp}).</li>
 *   <li>{@code GET .../pods/{name}/exec} checks the pod exists (404 Status otherwise), the container name if given
 *   (400 otherwise) and that it runs, negotiates the subprotocol like the real handshake (the first protocol the
 *   client offers that is supported; none: 403 Forbidden with an empty body, as {@code wsstream}'s handshake through
 *   {@code golang.org/x/net/websocket} answers), and upgrades to a {@link FakeExecSocket}.</li>
 * </ul>
 *
 * <p>Modelled, not real: scheduling (every pod lands at once on this host), image pulls (the image is the host's
 * {@code /usr}), CNI (no pod network), resource limits, probes, restarts. Real: the processes, their namespaces,
 * users and files, and the exec wire protocol.
 *
 * <p>Threads: Vert.x event loops call {@link #dispatch}; pod starts run on a worker pool; counters and switches are
 * atomics, readable and settable from any thread.
 */
final class FakeKubelet extends Dispatcher implements CustomResourceAware {

    private static final Pattern POD = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)(/[^?]*)?(\\?.*)?");
    private static final Pattern PODS = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/?(\\?.*)?");

    private final KubernetesMixedDispatcher store;
    private final Set<String> protocols;
    private final Map<String, FakePod> running = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> execs = new ConcurrentHashMap<>();
    private final Set<String> unpullable = ConcurrentHashMap.newKeySet();
    private final AtomicInteger creations = new AtomicInteger();
    /** Which exec breaks next (the first whose command it accepts), or null. */
    private final AtomicReference<Predicate<List<String>>> breakNext = new AtomicReference<>();
    private final ExecutorService starter = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-kubelet");
        t.setDaemon(true);
        return t;
    });

    FakeKubelet(KubernetesMixedDispatcher store, Set<String> protocols) {
        this.store = store;
        this.protocols = Set.copyOf(protocols);
    }

    /** Images whose pull fails: pods using one stay {@code Pending}. Mutable, thread-safe. */
    Set<String> unpullable() {
        return unpullable;
    }

    /** How many pods were created. */
    int podCreations() {
        return creations.get();
    }

    /** How many exec streams were opened into {@code pod} (in any namespace). */
    int execs(String pod) {
        AtomicInteger n = execs.get(pod);
        return n == null ? 0 : n.get();
    }

    /** Makes the next exec's stream break after its first output (or at its end): no status. */
    void breakNextExec() {
        breakNextExec(command -> true);
    }

    /**
     * Makes the stream of the next exec whose command {@code which} accepts break after its first output (or at its
     * end): no status. Engines run helper execs of their own (kills, sweeps, egress relays) at any time, so a test
     * of one run names that run's command.
     */
    void breakNextExec(Predicate<List<String>> which) {
        breakNext.set(which);
    }

    private boolean breaks(List<String> command) {
        Predicate<List<String>> which = breakNext.get();
        return which != null && which.test(command) && breakNext.compareAndSet(which, null);
    }

    /** The running fake pod of {@code namespace/name}, if it runs. */
    Optional<FakePod> pod(String namespace, String name) {
        return Optional.ofNullable(running.get(namespace + "/" + name));
    }

    /** Ends a running pod's processes and marks it evicted ({@code Failed}, reason {@code Evicted}). */
    void evict(String namespace, String name) {
        stop(namespace + "/" + name);
        updateStatus(namespace, name, new PodStatusBuilder().withPhase("Failed").withReason("Evicted")
                .withMessage("The node was low on resource: memory.")
                .addToConditions(condition("Ready", "False"), condition("ContainersReady", "False")).build());
    }

    /** Ends a running pod's processes as the OOM killer would: its container terminated {@code OOMKilled}, 137. */
    void oomKill(String namespace, String name) {
        stop(namespace + "/" + name);
        updateStatus(namespace, name, new PodStatusBuilder().withPhase("Failed")
                .addToConditions(condition("Ready", "False"), condition("ContainersReady", "False"))
                .addToContainerStatuses(new ContainerStatusBuilder().withName(PodLayout.CONTAINER).withReady(false)
                        .withStarted(false).withRestartCount(0)
                        .withState(new ContainerStateBuilder().withNewTerminated().withReason("OOMKilled")
                                .withExitCode(137).withFinishedAt(Instant.now().toString()).endTerminated().build())
                        .build())
                .build());
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath();
        HttpMethod method = request.method();
        Matcher pod = POD.matcher(path);
        if (method == HttpMethod.GET && pod.matches() && "/exec".equals(pod.group(3))) {
            return exec(request, pod.group(1), pod.group(2), pod.group(4));
        }
        MockResponse response = store.dispatch(request);
        boolean ok = response.code() >= 200 && response.code() < 300;
        Matcher pods = PODS.matcher(path);
        if (method == HttpMethod.POST && pods.matches() && ok) {
            // the store's answer is the stored pod; getBytes() leaves the body for the client
            Pod created = Serialization.unmarshal(new String(response.getBody().getBytes(), StandardCharsets.UTF_8),
                    Pod.class);
            creations.incrementAndGet();
            String ns = created.getMetadata().getNamespace() != null ? created.getMetadata().getNamespace()
                    : pods.group(1);
            starter.execute(() -> start(ns, created));
        } else if (method == HttpMethod.DELETE && ok && (pods.matches() || pod.matches() && pod.group(3) == null)) {
            for (String key : new ArrayList<>(running.keySet())) {
                String[] nsName = key.split("/", 2);
                if (get(nsName[0], nsName[1]) == null) {
                    stop(key);
                }
            }
        }
        return response;
    }

    /** Lets the store keep objects of a custom resource (for example agent-sandbox's claims). */
    @Override
    public void expectCustomResource(CustomResourceDefinitionContext context) {
        store.expectCustomResource(context);
    }

    @Override
    public void shutdown() {
        store.shutdown();
        starter.shutdownNow();
        new ArrayList<>(running.keySet()).forEach(this::stop);
    }

    /** Stops every pod. */
    void stopAll() {
        shutdown();
        try {
            starter.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        new ArrayList<>(running.keySet()).forEach(this::stop);
    }

    private void start(String ns, Pod pod) {
        String name = pod.getMetadata().getName();
        Container c = pod.getSpec().getContainers().get(0);
        if (unpullable.contains(c.getImage())) {
            updateStatus(ns, name, new PodStatusBuilder().withPhase("Pending")
                    .addToConditions(condition("Ready", "False"), condition("ContainersReady", "False"))
                    .addToContainerStatuses(new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
                            .withReady(false).withStarted(false).withRestartCount(0)
                            .withState(new ContainerStateBuilder().withNewWaiting().withReason("ErrImagePull")
                                    .withMessage("failed to pull and unpack image \"" + c.getImage() + "\": not found")
                                    .endWaiting().build())
                            .build())
                    .build());
            return;
        }
        long uid = firstNonNull(Optional.ofNullable(c.getSecurityContext()).map(SecurityContext::getRunAsUser),
                Optional.ofNullable(pod.getSpec().getSecurityContext()).map(PodSecurityContext::getRunAsUser),
                0L);
        long gid = firstNonNull(Optional.ofNullable(c.getSecurityContext()).map(SecurityContext::getRunAsGroup),
                Optional.ofNullable(pod.getSpec().getSecurityContext()).map(PodSecurityContext::getRunAsGroup),
                uid);
        List<String> mounts = c.getVolumeMounts() == null ? List.of()
                : c.getVolumeMounts().stream().map(VolumeMount::getMountPath).toList();
        FakePod fake;
        try {
            fake = FakePod.start(name, uid, gid, mounts);
        } catch (RuntimeException e) {
            updateStatus(ns, name, new PodStatusBuilder().withPhase("Pending")
                    .addToContainerStatuses(new ContainerStatusBuilder().withName(c.getName()).withReady(false)
                            .withState(new ContainerStateBuilder().withNewWaiting().withReason("CreateContainerError")
                                    .withMessage(String.valueOf(e.getMessage())).endWaiting().build())
                            .build())
                    .build());
            return;
        }
        String key = ns + "/" + name;
        FakePod previous = running.put(key, fake);
        if (previous != null) {
            previous.close();
        }
        if (get(ns, name) == null) { // deleted while it started
            stop(key);
            return;
        }
        String now = Instant.now().toString();
        updateStatus(ns, name, new PodStatusBuilder().withPhase("Running").withHostIP("127.0.0.1")
                .withPodIP("127.0.0.1").withStartTime(now)
                .addToConditions(condition("PodScheduled", "True"), condition("Initialized", "True"),
                        condition("ContainersReady", "True"), condition("Ready", "True"))
                .addToContainerStatuses(new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
                        .withReady(true).withStarted(true).withRestartCount(0)
                        .withState(new ContainerStateBuilder().withNewRunning().withStartedAt(now).endRunning().build())
                        .build())
                .build());
    }

    private void stop(String key) {
        FakePod fake = running.remove(key);
        if (fake != null) {
            fake.close();
        }
    }

    private MockResponse exec(RecordedRequest request, String ns, String name, String query) {
        Pod pod = get(ns, name);
        if (pod == null) {
            return status(404, "NotFound", "pods \"" + name + "\" not found");
        }
        List<String> command = new ArrayList<>();
        String container = null;
        boolean stdin = false;
        boolean stdout = false;
        boolean stderr = false;
        for (String pair : query == null ? new String[0] : query.substring(1).split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            switch (key) {
                case "command" -> command.add(value);
                case "container" -> container = value;
                case "stdin" -> stdin = "true".equals(value) || "1".equals(value);
                case "stdout" -> stdout = "true".equals(value) || "1".equals(value);
                case "stderr" -> stderr = "true".equals(value) || "1".equals(value);
                default -> {
                    // tty and others: not modelled
                }
            }
        }
        List<String> names = pod.getSpec().getContainers().stream().map(Container::getName).toList();
        if (container == null && names.size() != 1) {
            return status(400, "BadRequest", "a container name must be specified for pod " + name
                    + ", choose one of: " + names);
        }
        if (container != null && !names.contains(container)) {
            return status(400, "BadRequest", "container " + container + " is not valid for pod " + name);
        }
        if (command.isEmpty()) {
            return status(400, "BadRequest", "you must specify at least 1 command");
        }
        FakePod fake = running.get(ns + "/" + name);
        if (fake == null || !fake.isAlive()) {
            return status(404, "NotFound", "container not found (\"" + names.get(0) + "\")");
        }
        String protocol = negotiate(request.getHeaders().headers("Sec-WebSocket-Protocol"));
        if (protocol == null) {
            return new MockResponse().setResponseCode(403);
        }
        execs.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        return new MockResponse().withWebSocketUpgrade(new FakeExecSocket(fake, command, stdin, stdout, stderr,
                protocol, breaks(command)));
    }

    /** The first protocol the client offers that is supported, as {@code wsstream}'s handshake picks it. */
    private String negotiate(List<String> offered) {
        for (String header : offered) {
            for (String p : header.split(",")) {
                if (protocols.contains(p.trim())) {
                    return p.trim();
                }
            }
        }
        return null;
    }

    private Pod get(String ns, String name) {
        MockResponse r = store.dispatch(internal(HttpMethod.GET, "/api/v1/namespaces/" + ns + "/pods/" + name, null));
        if (r.code() != 200) {
            return null;
        }
        return Serialization.unmarshal(new String(r.getBody().getBytes(), StandardCharsets.UTF_8), Pod.class);
    }

    private void updateStatus(String ns, String name, PodStatus status) {
        for (int attempt = 0; attempt < 5; attempt++) {
            Pod pod = get(ns, name);
            if (pod == null) {
                return;
            }
            pod.setStatus(status);
            MockResponse r = store.dispatch(internal(HttpMethod.PUT,
                    "/api/v1/namespaces/" + ns + "/pods/" + name + "/status", Serialization.asJson(pod)));
            if (r.code() != 409) {
                return;
            }
        }
    }

    private static RecordedRequest internal(HttpMethod method, String path, String body) {
        Headers headers = Headers.builder().add("Content-Type", "application/json").build();
        Buffer buffer = new Buffer();
        if (body != null) {
            buffer.writeUtf8(body);
        }
        return new RecordedRequest("HTTP/1.1", method, path, headers, buffer);
    }

    private static MockResponse status(int code, String reason, String message) {
        String json = Serialization.asJson(new io.fabric8.kubernetes.api.model.StatusBuilder().withApiVersion("v1")
                .withKind("Status").withNewMetadata().endMetadata().withStatus("Failure").withMessage(message)
                .withReason(reason).withCode(code).build());
        return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json").setBody(json);
    }

    private static io.fabric8.kubernetes.api.model.PodCondition condition(String type, String status) {
        return new PodConditionBuilder().withType(type).withStatus(status)
                .withLastTransitionTime(Instant.now().toString()).build();
    }

    private static long firstNonNull(Optional<Long> a, Optional<Long> b, long otherwise) {
        return a.or(() -> b).orElse(otherwise);
    }
}
