package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;

/**
 * What a {@link KubernetesEngine.Builder} was told, read from its package-private fields, so that the starter's tests
 * see how the properties map onto the builder without starting an engine.
 */
public record BuilderSettings(KubernetesClient client, String context, String namespace, String image,
                              Long memoryBytes, Double cpus, Long workspaceBytes, String runtimeClassName,
                              Duration readyTimeout, Duration ttl, int warmPool, String agentSandbox,
                              boolean acceptUnhardenedSandbox, boolean sweepLeftovers,
                              boolean acceptOtherNetworkPolicies) {

    public static BuilderSettings of(KubernetesEngine.Builder b) {
        return new BuilderSettings(b.client, b.context, b.namespace, b.image, b.memoryBytes, b.cpus, b.workspaceBytes,
                b.runtimeClassName, b.readyTimeout, b.ttl, b.poolSize, b.sandboxWarmPool, b.acceptUnhardenedSandbox,
                b.sweepLeftovers, b.acceptOtherNetworkPolicies);
    }
}
