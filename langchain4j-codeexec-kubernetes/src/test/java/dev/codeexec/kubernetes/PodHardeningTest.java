package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.AppArmorProfileBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSourceBuilder;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.EphemeralContainerBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.SeccompProfileBuilder;
import io.fabric8.kubernetes.api.model.Sysctl;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** Each hardened setting taken away from an otherwise hardened pod is reported, alone, with where it is missing. */
class PodHardeningTest {

    static PodSpec hardened() {
        return FakeSandboxController.hardenedSpec("workspace", "gvisor");
    }

    static Stream<Arguments> weakenings() {
        return Stream.of(
                arguments(PodHardening.RUN_AS_NON_ROOT, "root uid on the container",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setRunAsUser(0L); return s; }),
                arguments(PodHardening.RUN_AS_NON_ROOT, "neither runAsNonRoot nor runAsUser",
                        (UnaryOperator<PodSpec>) s -> { s.getSecurityContext().setRunAsNonRoot(null); s.getSecurityContext().setRunAsUser(null); return s; }),
                arguments(PodHardening.RUN_AS_NON_ROOT, "the container overrides runAsNonRoot to false",
                        (UnaryOperator<PodSpec>) s -> { s.getSecurityContext().setRunAsUser(null); s.getContainers().get(0).getSecurityContext().setRunAsNonRoot(false); return s; }),
                arguments(PodHardening.NOT_PRIVILEGED, "privileged",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setPrivileged(true); return s; }),
                arguments(PodHardening.NO_PRIVILEGE_ESCALATION, "allowPrivilegeEscalation unset",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setAllowPrivilegeEscalation(null); return s; }),
                arguments(PodHardening.DROP_ALL_CAPABILITIES, "nothing dropped",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().getCapabilities().setDrop(List.of()); return s; }),
                arguments(PodHardening.DROP_ALL_CAPABILITIES, "ALL dropped, SYS_ADMIN added back",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().getCapabilities().setAdd(List.of("SYS_ADMIN")); return s; }),
                arguments(PodHardening.READ_ONLY_ROOT_FILESYSTEM, "writable root",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setReadOnlyRootFilesystem(false); return s; }),
                arguments(PodHardening.SECCOMP_RUNTIME_DEFAULT, "no seccomp profile",
                        (UnaryOperator<PodSpec>) s -> { s.getSecurityContext().setSeccompProfile(null); return s; }),
                arguments(PodHardening.SECCOMP_RUNTIME_DEFAULT, "the container overrides seccomp to Unconfined",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setSeccompProfile(new SeccompProfileBuilder().withType("Unconfined").build()); return s; }),
                arguments(PodHardening.NO_SERVICE_ACCOUNT_TOKEN, "token mounted",
                        (UnaryOperator<PodSpec>) s -> { s.setAutomountServiceAccountToken(null); return s; }),
                arguments(PodHardening.NO_HOST_NAMESPACES, "host network",
                        (UnaryOperator<PodSpec>) s -> { s.setHostNetwork(true); return s; }),
                arguments(PodHardening.NO_HOST_NAMESPACES, "host PID",
                        (UnaryOperator<PodSpec>) s -> { s.setHostPID(true); return s; }),
                arguments(PodHardening.NO_HOST_PATH_VOLUMES, "hostPath volume",
                        (UnaryOperator<PodSpec>) s -> { s.setVolumes(List.of(new VolumeBuilder().withName("root").withNewHostPath().withPath("/").endHostPath().build())); return s; }),
                arguments(PodHardening.RUNTIME_CLASS, "runc instead of gvisor",
                        (UnaryOperator<PodSpec>) s -> { s.setRuntimeClassName(null); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "a secret volume",
                        (UnaryOperator<PodSpec>) s -> { s.setVolumes(List.of(new VolumeBuilder().withName("creds").withNewSecret().withSecretName("db").endSecret().build())); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "a projected service account token",
                        (UnaryOperator<PodSpec>) s -> { s.setVolumes(List.of(new VolumeBuilder().withName("token").withNewProjected().addNewSource().withNewServiceAccountToken().withPath("token").endServiceAccountToken().endSource().endProjected().build())); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "a projected secret",
                        (UnaryOperator<PodSpec>) s -> { s.setVolumes(List.of(new VolumeBuilder().withName("p").withNewProjected().addNewSource().withNewSecret().withName("db").endSecret().endSource().endProjected().build())); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "env from a secret key",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).setEnv(List.of(new EnvVarBuilder().withName("TOKEN").withNewValueFrom().withNewSecretKeyRef().withName("db").withKey("password").endSecretKeyRef().endValueFrom().build())); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "envFrom a secret",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).setEnvFrom(List.of(new EnvFromSourceBuilder().withNewSecretRef().withName("db").endSecretRef().build())); return s; }),
                arguments(PodHardening.NO_HOST_NAMESPACES, "hostUsers true",
                        (UnaryOperator<PodSpec>) s -> { s.setHostUsers(true); return s; }),
                arguments(PodHardening.NO_SHARED_PROCESS_NAMESPACE, "shareProcessNamespace",
                        (UnaryOperator<PodSpec>) s -> { s.setShareProcessNamespace(true); return s; }),
                arguments(PodHardening.NO_HOST_PORTS, "a host port",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).setPorts(List.of(new ContainerPortBuilder().withContainerPort(8080).withHostPort(8080).build())); return s; }),
                arguments(PodHardening.DEFAULT_PROC_MOUNT, "procMount Unmasked",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setProcMount("Unmasked"); return s; }),
                arguments(PodHardening.SAFE_SYSCTLS, "an unsafe sysctl",
                        (UnaryOperator<PodSpec>) s -> { s.getSecurityContext().setSysctls(List.of(new Sysctl("kernel.msgmax", "65536"))); return s; }),
                arguments(PodHardening.APPARMOR_CONFINED, "the container's AppArmor profile Unconfined",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getSecurityContext().setAppArmorProfile(new AppArmorProfileBuilder().withType("Unconfined").build()); return s; }),
                arguments(PodHardening.APPARMOR_CONFINED, "the pod's AppArmor profile Unconfined",
                        (UnaryOperator<PodSpec>) s -> { s.getSecurityContext().setAppArmorProfile(new AppArmorProfileBuilder().withType("Unconfined").build()); return s; }),
                arguments(PodHardening.NO_EPHEMERAL_CONTAINERS, "an ephemeral container",
                        (UnaryOperator<PodSpec>) s -> { s.setEphemeralContainers(List.of(new EphemeralContainerBuilder().withName("debug").withImage("busybox").build())); return s; }),
                arguments(PodHardening.RESOURCE_LIMITS, "no memory limit",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).getResources().getLimits().remove("memory"); return s; }),
                arguments(PodHardening.RESOURCE_LIMITS, "no limits at all",
                        (UnaryOperator<PodSpec>) s -> { s.getContainers().get(0).setResources(null); return s; }),
                arguments(PodHardening.NO_CLUSTER_DNS, "dnsPolicy ClusterFirst",
                        (UnaryOperator<PodSpec>) s -> { s.setDnsPolicy("ClusterFirst"); return s; }),
                arguments(PodHardening.NO_CLUSTER_DNS, "dnsPolicy unset (the cluster's default, ClusterFirst)",
                        (UnaryOperator<PodSpec>) s -> { s.setDnsPolicy(null); return s; }),
                arguments(PodHardening.NO_HOST_PORTS, "a host port on a native sidecar",
                        (UnaryOperator<PodSpec>) s -> { s.setInitContainers(List.of(sidecar(hardened().getContainers().get(0), "Always"))); s.getInitContainers().get(0).setPorts(List.of(new ContainerPortBuilder().withContainerPort(53).withHostPort(53).build())); return s; }),
                arguments(PodHardening.NO_CREDENTIALS, "a native sidecar with env from a secret",
                        (UnaryOperator<PodSpec>) s -> { s.setInitContainers(List.of(sidecar(hardened().getContainers().get(0), "Always"))); s.getInitContainers().get(0).setEnvFrom(List.of(new EnvFromSourceBuilder().withNewSecretRef().withName("db").endSecretRef().build())); return s; }));
    }

    /** A copy of {@code c} as an init container named {@code proxy} with the given restart policy. */
    static Container sidecar(Container c, String restartPolicy) {
        return new ContainerBuilder(c).withName("proxy").withRestartPolicy(restartPolicy).build();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("weakenings")
    void should_report_exactly_the_weakened_setting_when_one_is_taken_away(PodHardening setting, String how,
                                                                         UnaryOperator<PodSpec> weaken) {
        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(weaken.apply(hardened()), null, "gvisor");

        assertThat(missing.keySet()).containsExactly(setting);
    }

    @Test
    void should_report_nothing_when_given_the_engines_own_pod_spec() {
        PodTemplate template = PodTemplate.builder().image("registry.example/python:3.12").runtimeClassName("gvisor")
                .build();
        PodSpec own = PodSpecs.workspacePod(template, "codeexec-x", Map.of(), List.of()).getSpec();

        assertThat(PodHardening.missingFrom(own, Map.of(), "gvisor")).isEmpty();
    }

    @Test
    void should_report_a_sidecar_by_name_when_a_native_sidecar_is_not_hardened() {
        PodSpec spec = hardened();
        spec.setInitContainers(new ArrayList<>(List.of(new ContainerBuilder().withName("proxy").withImage("envoy")
                .withRestartPolicy("Always").build())));

        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(spec, null, "gvisor");

        assertThat(missing.get(PodHardening.READ_ONLY_ROOT_FILESYSTEM))
                .containsExactly("sidecar proxy: readOnlyRootFilesystem=null");
        assertThat(missing.get(PodHardening.RESOURCE_LIMITS))
                .containsExactly("sidecar proxy: no limit on cpu, memory, ephemeral-storage");
    }

    @Test
    void should_not_check_an_ordinary_init_container_when_it_has_finished_before_the_claim() {
        PodSpec spec = hardened();
        spec.setInitContainers(new ArrayList<>(List.of(new ContainerBuilder().withName("setup").withImage("busybox")
                .build())));

        assertThat(PodHardening.missingFrom(spec, null, "gvisor")).isEmpty();
    }

    @Test
    void should_accept_a_safe_sysctl_and_refuse_an_unconfined_legacy_apparmor_annotation() {
        PodSpec safe = hardened();
        safe.getSecurityContext().setSysctls(List.of(new Sysctl("net.ipv4.ping_group_range", "0 2147483647")));
        assertThat(PodHardening.missingFrom(safe, null, "gvisor")).isEmpty();

        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(hardened(),
                Map.of(PodHardening.APPARMOR_ANNOTATION + "workspace", "unconfined"), "gvisor");

        assertThat(missing.keySet()).containsExactly(PodHardening.APPARMOR_CONFINED);
        assertThat(missing.get(PodHardening.APPARMOR_CONFINED))
                .containsExactly("container workspace: appArmorProfile=unconfined");
    }

    @Test
    void should_report_nothing_when_the_pod_is_as_hardened_as_the_engines() {
        assertThat(PodHardening.missingFrom(hardened(), null, "gvisor")).isEmpty();
    }

    @Test
    void should_accept_settings_given_per_container_instead_of_per_pod() {
        PodSpec spec = hardened();
        spec.setSecurityContext(null);
        spec.getContainers().get(0).getSecurityContext().setRunAsNonRoot(true);
        spec.getContainers().get(0).getSecurityContext().setSeccompProfile(new SeccompProfileBuilder().withType("RuntimeDefault").build());

        assertThat(PodHardening.missingFrom(spec, null, "gvisor")).isEmpty();
    }

    @Test
    void should_not_check_the_runtime_class_when_none_is_required() {
        PodSpec spec = hardened();
        spec.setRuntimeClassName(null);

        assertThat(PodHardening.missingFrom(spec, null, null)).isEmpty();
    }

    @Test
    void should_check_every_container_and_say_which_when_a_second_one_is_weak() {
        PodSpec spec = hardened();
        spec.getContainers().add(new PodSpecBuilder().addNewContainer().withName("sidecar").endContainer().build()
                .getContainers().get(0));

        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(spec, null, "gvisor");

        assertThat(missing.get(PodHardening.READ_ONLY_ROOT_FILESYSTEM))
                .containsExactly("container sidecar: readOnlyRootFilesystem=null");
        assertThat(missing.keySet()).containsExactly(PodHardening.NO_PRIVILEGE_ESCALATION,
                PodHardening.DROP_ALL_CAPABILITIES, PodHardening.READ_ONLY_ROOT_FILESYSTEM,
                PodHardening.RESOURCE_LIMITS);
    }
}
