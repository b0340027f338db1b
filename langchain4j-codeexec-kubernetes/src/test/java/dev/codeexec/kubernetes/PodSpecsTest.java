package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PodSpecsTest {

    static final PodTemplate TEMPLATE = PodTemplate.builder().namespace("agents").image("codeexec-python:bookworm")
            .build();
    static final OwnerReference LEASE = new OwnerReferenceBuilder().withApiVersion("coordination.k8s.io/v1")
            .withKind("Lease").withName("codeexec-engine-e1").withUid("uid-1").build();

    static Pod pod() {
        return PodSpecs.workspacePod(TEMPLATE, "codeexec-abc", PodLabels.of("e1", "ws-1", 5), List.of(LEASE));
    }

    static Container c(Pod p) {
        return p.getSpec().getContainers().get(0);
    }

    static Volume volume(Pod p, String mountPath) {
        String name = c(p).getVolumeMounts().stream().filter(m -> mountPath.equals(m.getMountPath()))
                .map(m -> m.getName()).findFirst().orElse(null);
        return p.getSpec().getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst().orElse(null);
    }

    /** One hardening setting: how to see it holds, and how to take it away. */
    record Hardening(String name, Predicate<Pod> holds, Consumer<Pod> remove) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Hardening> hardening() {
        return Stream.of(
                new Hardening("automountServiceAccountToken false",
                        p -> Boolean.FALSE.equals(p.getSpec().getAutomountServiceAccountToken()),
                        p -> p.getSpec().setAutomountServiceAccountToken(null)),
                new Hardening("enableServiceLinks false",
                        p -> Boolean.FALSE.equals(p.getSpec().getEnableServiceLinks()),
                        p -> p.getSpec().setEnableServiceLinks(true)),
                new Hardening("no host network", p -> !Boolean.TRUE.equals(p.getSpec().getHostNetwork()),
                        p -> p.getSpec().setHostNetwork(true)),
                new Hardening("no host PID", p -> !Boolean.TRUE.equals(p.getSpec().getHostPID()),
                        p -> p.getSpec().setHostPID(true)),
                new Hardening("no host IPC", p -> !Boolean.TRUE.equals(p.getSpec().getHostIPC()),
                        p -> p.getSpec().setHostIPC(true)),
                new Hardening("restartPolicy Never", p -> "Never".equals(p.getSpec().getRestartPolicy()),
                        p -> p.getSpec().setRestartPolicy(null)),
                new Hardening("runAsNonRoot", p -> Boolean.TRUE.equals(p.getSpec().getSecurityContext()
                        .getRunAsNonRoot()), p -> p.getSpec().getSecurityContext().setRunAsNonRoot(null)),
                new Hardening("runAsUser 10001", p -> Long.valueOf(10001).equals(p.getSpec().getSecurityContext()
                        .getRunAsUser()), p -> p.getSpec().getSecurityContext().setRunAsUser(null)),
                new Hardening("runAsGroup 10001", p -> Long.valueOf(10001).equals(p.getSpec().getSecurityContext()
                        .getRunAsGroup()), p -> p.getSpec().getSecurityContext().setRunAsGroup(null)),
                new Hardening("fsGroup 10001", p -> Long.valueOf(10001).equals(p.getSpec().getSecurityContext()
                        .getFsGroup()), p -> p.getSpec().getSecurityContext().setFsGroup(null)),
                new Hardening("seccomp RuntimeDefault", p -> p.getSpec().getSecurityContext().getSeccompProfile()
                        != null && "RuntimeDefault".equals(p.getSpec().getSecurityContext().getSeccompProfile()
                        .getType()), p -> p.getSpec().getSecurityContext().setSeccompProfile(null)),
                new Hardening("allowPrivilegeEscalation false", p -> Boolean.FALSE.equals(c(p).getSecurityContext()
                        .getAllowPrivilegeEscalation()), p -> c(p).getSecurityContext()
                        .setAllowPrivilegeEscalation(null)),
                new Hardening("readOnlyRootFilesystem", p -> Boolean.TRUE.equals(c(p).getSecurityContext()
                        .getReadOnlyRootFilesystem()), p -> c(p).getSecurityContext().setReadOnlyRootFilesystem(false)),
                new Hardening("privileged false", p -> !Boolean.TRUE.equals(c(p).getSecurityContext()
                        .getPrivileged()), p -> c(p).getSecurityContext().setPrivileged(true)),
                new Hardening("capabilities drop ALL, add none", p -> c(p).getSecurityContext().getCapabilities()
                        != null && c(p).getSecurityContext().getCapabilities().getDrop().equals(List.of("ALL"))
                        && c(p).getSecurityContext().getCapabilities().getAdd().isEmpty(),
                        p -> c(p).getSecurityContext().getCapabilities().setDrop(List.of())),
                new Hardening("container runAsNonRoot", p -> !Boolean.FALSE.equals(c(p).getSecurityContext()
                        .getRunAsNonRoot()), p -> c(p).getSecurityContext().setRunAsNonRoot(false)),
                new Hardening("container user not root", p -> !Long.valueOf(0).equals(c(p).getSecurityContext()
                        .getRunAsUser()), p -> c(p).getSecurityContext().setRunAsUser(0L)),
                new Hardening("cpu limit 1", p -> new Quantity("1").equals(c(p).getResources().getLimits()
                        .get("cpu")), p -> c(p).getResources().getLimits().remove("cpu")),
                new Hardening("memory limit 1Gi", p -> new Quantity("1Gi").equals(c(p).getResources().getLimits()
                        .get("memory")), p -> c(p).getResources().getLimits().remove("memory")),
                new Hardening("ephemeral-storage limit 2Gi", p -> new Quantity("2Gi").equals(c(p).getResources()
                        .getLimits().get("ephemeral-storage")),
                        p -> c(p).getResources().getLimits().remove("ephemeral-storage")),
                new Hardening("requests for cpu, memory, ephemeral-storage", p -> c(p).getResources().getRequests()
                        .keySet().equals(java.util.Set.of("cpu", "memory", "ephemeral-storage")),
                        p -> c(p).getResources().getRequests().remove("memory")),
                new Hardening("workspace emptyDir 512Mi at " + PodLayout.VOLUME, p -> volume(p, PodLayout.VOLUME)
                        != null && volume(p, PodLayout.VOLUME).getEmptyDir() != null
                        && new Quantity("512Mi").equals(volume(p, PodLayout.VOLUME).getEmptyDir().getSizeLimit()),
                        p -> volume(p, PodLayout.VOLUME).getEmptyDir().setSizeLimit(null)),
                new Hardening("tmp emptyDir 64Mi at /tmp", p -> volume(p, PodLayout.TMP) != null
                        && volume(p, PodLayout.TMP).getEmptyDir() != null
                        && new Quantity("64Mi").equals(volume(p, PodLayout.TMP).getEmptyDir().getSizeLimit()),
                        p -> volume(p, PodLayout.TMP).getEmptyDir().setSizeLimit(null)),
                new Hardening("only emptyDir volumes", p -> p.getSpec().getVolumes().stream()
                        .allMatch(v -> v.getEmptyDir() != null && v.getHostPath() == null),
                        p -> p.getSpec().getVolumes().get(0).setHostPath(
                                new io.fabric8.kubernetes.api.model.HostPathVolumeSource("/", null))),
                new Hardening("one container, no init or ephemeral ones", p -> p.getSpec().getContainers().size() == 1
                        && p.getSpec().getInitContainers().isEmpty() && p.getSpec().getEphemeralContainers().isEmpty(),
                        p -> p.getSpec().getInitContainers().add(new Container())),
                new Hardening("no host ports", p -> c(p).getPorts().isEmpty(),
                        p -> c(p).getPorts().add(new io.fabric8.kubernetes.api.model.ContainerPortBuilder()
                                .withContainerPort(80).withHostPort(80).build())),
                new Hardening("activeDeadlineSeconds 12 h", p -> Long.valueOf(12 * 3600).equals(p.getSpec()
                        .getActiveDeadlineSeconds()), p -> p.getSpec().setActiveDeadlineSeconds(null)),
                new Hardening("dnsPolicy None, loopback nameserver only", p -> "None".equals(p.getSpec().getDnsPolicy())
                        && p.getSpec().getDnsConfig().getNameservers().equals(List.of("127.0.0.1")),
                        p -> p.getSpec().setDnsPolicy("ClusterFirst")),
                new Hardening("HOME is the workspace", p -> c(p).getEnv().stream().anyMatch(e -> e.getName()
                        .equals("HOME") && e.getValue().equals(PodLayout.ROOT)), p -> c(p).getEnv().removeIf(e -> e
                        .getName().equals("HOME"))),
                new Hardening("no proxy variables without a proxy", p -> c(p).getEnv().stream()
                        .noneMatch(e -> e.getName().toLowerCase().endsWith("_proxy")),
                        p -> c(p).getEnv().add(new io.fabric8.kubernetes.api.model.EnvVar("HTTP_PROXY", "x", null))),
                new Hardening("PID 1 is the reaping sleep loop", p -> c(p).getCommand().equals(List.of("sh", "-c",
                        "while :; do sleep 3600 & wait $!; done")), p -> c(p).setCommand(List.of("sleep", "inf"))),
                new Hardening("container named " + PodLayout.CONTAINER, p -> PodLayout.CONTAINER.equals(c(p)
                        .getName()), p -> c(p).setName("main")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hardening")
    void should_apply_hardening_setting_when_building_a_workspace_pod(Hardening h) {
        assertThat(h.holds().test(pod())).as(h.name()).isTrue();
        // the YAML the cluster gets carries it too
        Pod played = Serialization.unmarshal(Serialization.asYaml(pod()), Pod.class);
        assertThat(h.holds().test(played)).as(h.name() + " after YAML").isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hardening")
    void should_notice_a_missing_hardening_setting_when_it_is_taken_away(Hardening h) {
        Pod weakened = new PodBuilder(pod()).build();
        h.remove().accept(weakened);
        assertThat(h.holds().test(weakened)).as(h.name() + " removed").isFalse();
    }

    @Test
    void should_carry_labels_owners_and_template_choices_when_configured() {
        PodTemplate t = TEMPLATE.toBuilder().runtimeClassName("gvisor").imagePullPolicy("IfNotPresent")
                .imagePullSecrets(List.of("regcred")).nodeSelector(Map.of("pool", "sandbox"))
                .labels(Map.of("team", "a")).annotations(Map.of("note", "x")).user(2000, 3000)
                .env(Map.of("LANG", "C.UTF-8")).build();
        Pod p = PodSpecs.workspacePod(t, "codeexec-x", PodLabels.of("e1", "ws-1", 5), List.of(LEASE));

        assertThat(p.getMetadata().getNamespace()).isEqualTo("agents");
        assertThat(p.getMetadata().getLabels()).containsEntry(PodLabels.ENGINE, "e1")
                .containsEntry(PodLabels.WORKSPACE, "ws-1").containsEntry(PodLabels.OWNER, "langchain4j-codeexec")
                .containsEntry("team", "a");
        assertThat(p.getMetadata().getAnnotations()).containsEntry("note", "x");
        assertThat(p.getMetadata().getOwnerReferences()).containsExactly(LEASE);
        assertThat(p.getSpec().getRuntimeClassName()).isEqualTo("gvisor");
        assertThat(c(p).getImage()).isEqualTo("codeexec-python:bookworm");
        assertThat(c(p).getImagePullPolicy()).isEqualTo("IfNotPresent");
        assertThat(p.getSpec().getImagePullSecrets()).extracting("name").containsExactly("regcred");
        assertThat(p.getSpec().getNodeSelector()).containsEntry("pool", "sandbox");
        assertThat(p.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(2000L);
        assertThat(p.getSpec().getSecurityContext().getRunAsGroup()).isEqualTo(3000L);
        assertThat(c(p).getEnv()).extracting("name").containsExactly("HOME", "PATH", "LANG");
    }

    @Test
    void should_leave_runtime_class_and_pull_policy_to_the_cluster_when_unset() {
        assertThat(pod().getSpec().getRuntimeClassName()).isNull();
        assertThat(c(pod()).getImagePullPolicy()).isNull();
        String yaml = Serialization.asYaml(pod());
        assertThat(yaml).doesNotContain("runtimeClassName").doesNotContain("imagePullPolicy");
    }

    @Test
    void should_deny_all_traffic_when_no_egress_proxy_is_configured() {
        NetworkPolicy np = PodSpecs.workspacePolicy(TEMPLATE, "codeexec-engine-e1", PodLabels.engine("e1"),
                List.of(LEASE));

        assertThat(np.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        assertThat(np.getSpec().getIngress()).isEmpty();
        assertThat(np.getSpec().getEgress()).isEmpty();
        assertThat(np.getSpec().getPodSelector().getMatchLabels()).isEqualTo(PodLabels.engine("e1"));
        assertThat(np.getMetadata().getOwnerReferences()).containsExactly(LEASE);
        String yaml = Serialization.asYaml(np);
        assertThat(yaml).contains("- \"Ingress\"").contains("- \"Egress\"");
        NetworkPolicy back = Serialization.unmarshal(yaml, NetworkPolicy.class);
        assertThat(back.getSpec().getEgress()).isEmpty();
        assertThat(back.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
    }

    @Test
    void should_allow_only_the_proxy_and_set_proxy_env_when_an_egress_proxy_is_configured() {
        PodTemplate t = TEMPLATE.toBuilder().egressProxy("10.96.0.20:3128")
                .egressProxyPods(Map.of("app", "egress-proxy"), "proxy", 8080).build();

        NetworkPolicy np = PodSpecs.workspacePolicy(t, "p", PodLabels.engine("e1"), List.of());
        Pod p = PodSpecs.workspacePod(t, "codeexec-x", PodLabels.of("e1", "ws-1", 5), List.of());

        // Two rules, each port with its own peer: the ClusterIP on the Service's port, the proxy's pods on their
        // target port; never the ClusterIP on the target port or the pods on the Service's port.
        assertThat(np.getSpec().getEgress()).hasSize(2);
        var service = np.getSpec().getEgress().get(0);
        assertThat(service.getTo()).singleElement().satisfies(peer -> {
            assertThat(peer.getIpBlock().getCidr()).isEqualTo("10.96.0.20/32");
            assertThat(peer.getPodSelector()).isNull();
        });
        assertThat(service.getPorts()).singleElement().satisfies(port -> {
            assertThat(port.getProtocol()).isEqualTo("TCP");
            assertThat(port.getPort().getIntVal()).isEqualTo(3128);
        });
        var proxyPods = np.getSpec().getEgress().get(1);
        NetworkPolicyPeer pods = proxyPods.getTo().get(0);
        assertThat(proxyPods.getTo()).hasSize(1);
        assertThat(pods.getIpBlock()).isNull();
        assertThat(pods.getPodSelector().getMatchLabels()).isEqualTo(Map.of("app", "egress-proxy"));
        assertThat(pods.getNamespaceSelector().getMatchLabels())
                .isEqualTo(Map.of("kubernetes.io/metadata.name", "proxy"));
        assertThat(proxyPods.getPorts()).singleElement().satisfies(port -> {
            assertThat(port.getProtocol()).isEqualTo("TCP");
            assertThat(port.getPort().getIntVal()).isEqualTo(8080);
        });
        assertThat(np.getSpec().getIngress()).isEmpty();
        assertThat(c(p).getEnv()).filteredOn(e -> e.getName().equalsIgnoreCase("https_proxy")).hasSize(2)
                .allSatisfy(e -> assertThat(e.getValue()).isEqualTo("http://10.96.0.20:3128"));
        assertThat(p.getSpec().getDnsPolicy()).isEqualTo("None");
    }

    @Test
    void should_allow_the_proxy_address_alone_when_no_proxy_pods_are_named() {
        PodTemplate t = TEMPLATE.toBuilder().egressProxy("10.96.0.20:3128").build();

        NetworkPolicy np = PodSpecs.workspacePolicy(t, "p", PodLabels.engine("e1"), List.of());

        assertThat(np.getSpec().getEgress()).singleElement().satisfies(rule -> {
            assertThat(rule.getTo()).singleElement().extracting(peer -> peer.getIpBlock().getCidr())
                    .isEqualTo("10.96.0.20/32");
            assertThat(rule.getPorts()).singleElement().extracting(port -> port.getPort().getIntVal())
                    .isEqualTo(3128);
        });
    }
}
