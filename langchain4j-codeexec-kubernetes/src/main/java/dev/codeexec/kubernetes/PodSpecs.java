package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPortBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The objects a workspace needs, as pure functions of a {@link PodTemplate}: the hardened pod and the NetworkPolicy
 * that fences it in. Nothing here talks to a cluster, so the specs can be checked field by field, serialised and
 * played elsewhere ({@code podman kube play}).
 *
 * <p>The hardening is not configurable: no service-account token, no service links, no host namespaces, never
 * restarted, every process as the template's non-root user and group with seccomp {@code RuntimeDefault}; the one
 * container unprivileged, without privilege escalation or any capability, on a read-only root with only two
 * size-limited {@code emptyDir} volumes writable ({@link PodLayout#VOLUME} and {@link PodLayout#TMP}), with CPU,
 * memory and ephemeral-storage limits. DNS: {@code dnsPolicy: None} with the one nameserver {@code 127.0.0.1}, where
 * nothing answers: a workspace has nothing to resolve (its only egress, the proxy, is an address and resolves names
 * itself), and cluster DNS would be a way out past a NetworkPolicy that the network plugin may not even enforce.
 * Kubernetes refuses {@code None} without a nameserver, hence the loopback one.
 */
final class PodSpecs {

    private PodSpecs() {
    }

    /**
     * PID 1 of a workspace container: a shell that sleeps and waits forever. {@code wait} reaps any child, so the
     * orphans of runs that the pod's PID 1 inherits do not pile up as zombies; the shell installs no handler, and
     * PID 1 ignores signals it does not handle, so no run can stop it. {@code sleep} runs as a child so that
     * {@code wait} can return to reap.
     */
    static final List<String> INIT = List.of("sh", "-c", "while :; do sleep 3600 & wait $!; done");

    /** The volume names of the workspace and {@code /tmp}. */
    static final String WORKSPACE_VOLUME = "workspace";
    static final String TMP_VOLUME = "tmp";

    /** A nameserver that is not there: the pod resolves nothing (see the class doc). */
    static final String NO_NAMESERVER = "127.0.0.1";

    /**
     * The pod of one workspace.
     *
     * @param t      the operator's template
     * @param name   the pod's name
     * @param labels the engine's labels ({@link PodLabels}); the template's extra labels are added under them
     * @param owners the pod's owner references (the engine's Lease; an application object), may be empty
     * @return the pod to create, in the template's namespace (null: the client's)
     */
    static Pod workspacePod(PodTemplate t, String name, Map<String, String> labels, List<OwnerReference> owners) {
        Map<String, String> allLabels = new LinkedHashMap<>(t.labels());
        allLabels.putAll(labels);
        return new PodBuilder()
                .withNewMetadata()
                .withName(name).withNamespace(t.namespace()).withLabels(allLabels)
                .withAnnotations(new LinkedHashMap<>(t.annotations())).withOwnerReferences(owners)
                .endMetadata()
                .withNewSpec()
                .withAutomountServiceAccountToken(false)
                .withEnableServiceLinks(false)
                .withHostNetwork(false).withHostPID(false).withHostIPC(false)
                .withShareProcessNamespace(false)
                .withRestartPolicy("Never")
                // PID 1 handles no signal, so SIGTERM does nothing: do not wait the default 30 s before SIGKILL.
                .withTerminationGracePeriodSeconds(1L)
                .withActiveDeadlineSeconds(t.activeDeadline().toSeconds())
                .withDnsPolicy("None")
                .withNewDnsConfig().withNameservers(NO_NAMESERVER).endDnsConfig()
                .withRuntimeClassName(t.runtimeClassName())
                .withNodeSelector(new LinkedHashMap<>(t.nodeSelector()))
                .withTolerations(new ArrayList<>(t.tolerations()))
                .withImagePullSecrets(t.imagePullSecrets().stream().map(LocalObjectReference::new).toList())
                .withNewSecurityContext()
                .withRunAsNonRoot(true).withRunAsUser(t.uid()).withRunAsGroup(t.gid()).withFsGroup(t.gid())
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .endSecurityContext()
                .withContainers(container(t))
                .withVolumes(emptyDir(WORKSPACE_VOLUME, t.workspaceSizeLimit().toString()),
                        emptyDir(TMP_VOLUME, t.tmpSizeLimit().toString()))
                .endSpec()
                .build();
    }

    /**
     * The environment of the workspace container, the one list both its PID 1 and every run start from
     * ({@link PodEnvironment}): the template's {@code env} ({@code PATH} first) and, with an egress proxy, the proxy
     * variables. {@code HOME} is not in it: the container gets the workspace, a run its own {@code home/}.
     */
    static Map<String, String> environment(PodTemplate t) {
        Map<String, String> env = new LinkedHashMap<>(t.env());
        if (t.egressProxy() != null) {
            String url = t.egressProxy().url();
            for (String k : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
                env.put(k, url);
            }
        }
        return env;
    }

    private static Container container(PodTemplate t) {
        List<EnvVar> env = new ArrayList<>();
        env.add(new EnvVar("HOME", PodLayout.ROOT, null));
        environment(t).forEach((k, v) -> env.add(new EnvVar(k, v, null)));
        return new ContainerBuilder()
                .withName(PodLayout.CONTAINER)
                .withImage(t.image())
                .withImagePullPolicy(t.imagePullPolicy())
                .withCommand(INIT)
                // No workingDir: the runtime would create a missing one as root, and the workspace must be the user's.
                .withEnv(env)
                .withStdin(false).withTty(false)
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withPrivileged(false)
                .withRunAsNonRoot(true).withRunAsUser(t.uid()).withRunAsGroup(t.gid())
                .withNewCapabilities().withDrop("ALL").endCapabilities()
                .endSecurityContext()
                .withNewResources()
                .withLimits(new LinkedHashMap<>(t.limits()))
                .withRequests(new LinkedHashMap<>(t.requests()))
                .endResources()
                .addNewVolumeMount().withName(WORKSPACE_VOLUME).withMountPath(PodLayout.VOLUME).endVolumeMount()
                .addNewVolumeMount().withName(TMP_VOLUME).withMountPath(PodLayout.TMP).endVolumeMount()
                .build();
    }

    private static Volume emptyDir(String name, String size) {
        return new VolumeBuilder().withName(name)
                .withNewEmptyDir().withNewSizeLimit(size).endEmptyDir()
                .build();
    }

    /**
     * The NetworkPolicy of an engine's workspace pods: both directions governed, no ingress at all; no egress at all,
     * or, with an operator's egress proxy, TCP to the proxy only: one rule for its ClusterIP on the Service's port, and,
     * where the template names the proxy's pods, one rule for those pods on their target port (each port only with its
     * own peer). No rule for DNS: the pods resolve nothing (see the class doc). A policy takes effect only where the
     * cluster's network plugin enforces NetworkPolicy (Calico, Cilium; not kindnet or flannel alone), and other
     * policies that select the same pods add to it ({@link PolicyConflicts}).
     *
     * @param t        the template (its namespace and egress proxy)
     * @param name     the policy's name
     * @param selector the labels of the pods it fences in
     * @param owners   its owner references, may be empty
     */
    static NetworkPolicy workspacePolicy(PodTemplate t, String name, Map<String, String> selector,
                                         List<OwnerReference> owners) {
        List<NetworkPolicyEgressRule> egress = new ArrayList<>();
        PodTemplate.EgressProxy proxy = t.egressProxy();
        if (proxy != null) {
            NetworkPolicyPeer service = new NetworkPolicyPeerBuilder().withNewIpBlock()
                    .withCidr(proxy.host() + (proxy.host().contains(":") ? "/128" : "/32")).endIpBlock().build();
            egress.add(new NetworkPolicyEgressRuleBuilder().withTo(service).withPorts(tcp(proxy.port())).build());
            if (!proxy.podLabels().isEmpty()) {
                NetworkPolicyPeerBuilder pods = new NetworkPolicyPeerBuilder().withNewPodSelector()
                        .withMatchLabels(new LinkedHashMap<>(proxy.podLabels())).endPodSelector();
                if (proxy.namespace() != null) {
                    pods.withNewNamespaceSelector()
                            .addToMatchLabels("kubernetes.io/metadata.name", proxy.namespace()).endNamespaceSelector();
                }
                egress.add(new NetworkPolicyEgressRuleBuilder().withTo(pods.build())
                        .withPorts(tcp(proxy.targetPort())).build());
            }
        }
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withName(name).withNamespace(t.namespace())
                .withLabels(Map.of(PodLabels.OWNER, PodLabels.OWNER_VALUE)).withOwnerReferences(owners)
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector().withMatchLabels(new LinkedHashMap<>(selector)).endPodSelector()
                .withPolicyTypes("Ingress", "Egress")
                .withIngress(List.of())
                .withEgress(egress)
                .endSpec()
                .build();
    }

    private static NetworkPolicyPort tcp(int port) {
        return new NetworkPolicyPortBuilder().withProtocol("TCP").withPort(new IntOrString(port)).build();
    }
}
