package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.function.Function;

/**
 * Plays the kubelet for the CRUD mock server, which stores pods but never runs them: every new workspace pod gets the
 * status {@link #next} gives it (Ready by default), written through the status subresource.
 */
final class StatusSetter implements AutoCloseable {

    private final KubernetesClient client;
    private final SharedIndexInformer<Pod> informer;
    volatile Function<Pod, PodStatus> next = p -> ready();

    StatusSetter(KubernetesClient client, String namespace) {
        this.client = client;
        this.informer = client.pods().inNamespace(namespace).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                if (pod.getStatus() == null || pod.getStatus().getPhase() == null) {
                    set(pod, next.apply(pod));
                }
            }

            @Override
            public void onUpdate(Pod oldPod, Pod newPod) {
            }

            @Override
            public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
            }
        });
    }

    /** Writes a pod's status. */
    void set(Pod pod, PodStatus status) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .editStatus(p -> {
                    p.setStatus(status);
                    return p;
                });
    }

    static PodStatus ready() {
        return new PodStatusBuilder().withPhase("Running")
                .addNewCondition().withType("PodScheduled").withStatus("True").endCondition()
                .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .addToContainerStatuses(new ContainerStatusBuilder().withName(PodLayout.CONTAINER).withReady(true)
                        .withNewState().withNewRunning().endRunning().endState().build())
                .build();
    }

    static PodStatus waiting(String reason, String message) {
        return new PodStatusBuilder().withPhase("Pending")
                .addNewCondition().withType("PodScheduled").withStatus("True").endCondition()
                .addNewCondition().withType("Ready").withStatus("False").endCondition()
                .addToContainerStatuses(new ContainerStatusBuilder().withName(PodLayout.CONTAINER).withReady(false)
                        .withNewState().withNewWaiting().withReason(reason).withMessage(message).endWaiting()
                        .endState().build())
                .build();
    }

    static PodStatus unschedulable() {
        return new PodStatusBuilder().withPhase("Pending")
                .addNewCondition().withType("PodScheduled").withStatus("False").withReason("Unschedulable")
                .withMessage("0/3 nodes are available: 3 Insufficient memory.").endCondition()
                .build();
    }

    static PodStatus evicted() {
        return new PodStatusBuilder().withPhase("Failed").withReason("Evicted")
                .withMessage("Pod ephemeral local storage usage exceeds the total limit of containers 2Gi.")
                .build();
    }

    static PodStatus oomKilled() {
        return new PodStatusBuilder().withPhase("Failed")
                .addToContainerStatuses(new ContainerStatusBuilder().withName(PodLayout.CONTAINER).withReady(false)
                        .withNewState().withNewTerminated().withReason("OOMKilled").withExitCode(137).endTerminated()
                        .endState().build())
                .build();
    }

    @Override
    public void close() {
        informer.close();
    }
}
