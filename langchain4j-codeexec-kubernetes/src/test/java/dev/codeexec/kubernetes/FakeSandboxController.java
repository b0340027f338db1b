package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * Plays the agent-sandbox controller against the mock API server: a thread ({@code fake-sandbox-controller}) takes
 * each newly added {@code SandboxClaim} from a watch and hands it to the test's behaviour, which uses the helpers
 * here to do what the real controller does (create the {@code Sandbox} and its pod with the claim-uid label and the
 * pod-name annotation, then mirror {@code Ready} and {@code status.sandbox.name} onto the claim). The watcher only
 * queues events; the thread does the blocking calls. A failure in the behaviour is rethrown by {@link #close()}.
 */
final class FakeSandboxController implements AutoCloseable {

    private final KubernetesClient client;
    private final String namespace;
    private final BiConsumer<FakeSandboxController, GenericKubernetesResource> behaviour;
    private final BlockingQueue<GenericKubernetesResource> added = new LinkedBlockingQueue<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Watch watch;
    private final Thread thread;

    FakeSandboxController(KubernetesClient client, String namespace,
                          BiConsumer<FakeSandboxController, GenericKubernetesResource> behaviour) {
        this.client = client;
        this.namespace = namespace;
        this.behaviour = behaviour;
        this.watch = claims().watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, GenericKubernetesResource resource) {
                if (action == Action.ADDED) {
                    added.add(resource);
                }
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
        this.thread = new Thread(this::loop, "fake-sandbox-controller");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                behaviour.accept(this, added.take());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure.set(t);
        }
    }

    /** Creates a Sandbox for the claim, annotated with {@code podName} when not null. */
    void createSandbox(GenericKubernetesResource claim, String sandboxName, String podName) {
        GenericKubernetesResource sandbox = new GenericKubernetesResource();
        sandbox.setApiVersion("agents.x-k8s.io/v1beta1");
        sandbox.setKind("Sandbox");
        Map<String, String> annotations = new LinkedHashMap<>();
        if (podName != null) {
            annotations.put(SandboxClaims.POD_NAME_ANNOTATION, podName);
        }
        sandbox.setMetadata(new ObjectMetaBuilder().withName(sandboxName).withNamespace(namespace)
                .withLabels(Map.of(SandboxClaims.CLAIM_UID_LABEL, claim.getMetadata().getUid()))
                .withAnnotations(annotations).build());
        sandbox.setAdditionalProperty("spec", Map.of("podTemplate", Map.of("spec", Map.of())));
        resources("Sandbox", "sandboxes", "agents.x-k8s.io").resource(sandbox).create();
    }

    /** Creates the sandbox's pod, labelled with {@code claimUid} when not null. */
    void createPod(String podName, String claimUid, PodSpec spec) {
        createPod(podName, claimUid, spec, Map.of());
    }

    /** Creates the sandbox's pod with the template's {@code labels}, and {@code claimUid} when not null. */
    void createPod(String podName, String claimUid, PodSpec spec, Map<String, String> templateLabels) {
        Map<String, String> labels = new LinkedHashMap<>(templateLabels);
        if (claimUid != null) {
            labels.put(SandboxClaims.CLAIM_UID_LABEL, claimUid);
        }
        client.pods().inNamespace(namespace).resource(new PodBuilder()
                .withMetadata(new ObjectMetaBuilder().withName(podName).withNamespace(namespace).withLabels(labels).build())
                .withSpec(spec).build()).create();
    }

    /** Gives the pod the status of a container stuck in {@code reason} (for example {@code ImagePullBackOff}). */
    void setPodWaiting(String podName, String container, String reason, String message) {
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        pod.setStatus(new PodStatusBuilder().withPhase("Pending").addNewContainerStatus().withName(container)
                .withNewState().withNewWaiting().withReason(reason).withMessage(message).endWaiting().endState()
                .endContainerStatus().build());
        client.pods().inNamespace(namespace).resource(pod).updateStatus();
    }

    /** Writes the claim's status: one Ready condition and, when not null, {@code status.sandbox.name}. */
    void setReady(GenericKubernetesResource claim, String status, String reason, String message, String sandboxName) {
        GenericKubernetesResource current = claims().withName(claim.getMetadata().getName()).get();
        Map<String, Object> condition = new LinkedHashMap<>();
        condition.put("type", "Ready");
        condition.put("status", status);
        condition.put("reason", reason);
        condition.put("message", message);
        condition.put("lastTransitionTime", "2026-01-01T00:00:00Z");
        Map<String, Object> statusMap = new LinkedHashMap<>();
        statusMap.put("conditions", List.of(condition));
        if (sandboxName != null) {
            statusMap.put("sandbox", Map.of("name", sandboxName));
        }
        current.setAdditionalProperty("status", statusMap);
        claims().resource(current).updateStatus();
    }

    /** The whole happy path of a warm adoption: sandbox, pod named differently, annotation, Ready=True. */
    void adopt(GenericKubernetesResource claim, String sandboxName, String podName, PodSpec spec) {
        createPod(podName, claim.getMetadata().getUid(), spec);
        createSandbox(claim, sandboxName, podName);
        setReady(claim, "True", "DependenciesReady", "Pod is Ready", sandboxName);
    }

    NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> claims() {
        return resources("SandboxClaim", "sandboxclaims", "extensions.agents.x-k8s.io");
    }

    NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> resources(
            String kind, String plural, String group) {
        return client.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(group)
                .withVersion("v1beta1").withKind(kind).withPlural(plural).withNamespaced(true).build())
                .inNamespace(namespace);
    }

    @Override
    public void close() throws InterruptedException {
        watch.close();
        thread.interrupt();
        thread.join();
        if (failure.get() != null) {
            throw new AssertionError("the fake controller failed", failure.get());
        }
    }

    /** A pod spec as hardened as the engine's own: one container {@code name}, every {@link PodHardening} met. */
    static PodSpec hardenedSpec(String container, String runtimeClass) {
        return new PodSpecBuilder().withAutomountServiceAccountToken(false).withRuntimeClassName(runtimeClass)
                .withDnsPolicy("None")
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(10001L)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .withContainers(new ContainerBuilder().withName(container).withImage("python:3.12")
                        .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                        .withPrivileged(false).withNewCapabilities().withDrop("ALL").endCapabilities()
                        .endSecurityContext()
                        .withNewResources().addToLimits("cpu", new Quantity("1")).addToLimits("memory", new Quantity("1Gi"))
                        .addToLimits("ephemeral-storage", new Quantity("2Gi")).endResources().build())
                .build();
    }

    /** A pod spec with no security settings at all, as a plain template would give. */
    static PodSpec plainSpec(String container) {
        return new PodSpecBuilder().withContainers(new ContainerBuilder().withName(container).withImage("python:3.12")
                .build()).build();
    }
}
