package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.SeccompProfileBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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
                        (UnaryOperator<PodSpec>) s -> { s.setRuntimeClassName(null); return s; }));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("weakenings")
    void should_report_exactly_the_weakened_setting_when_one_is_taken_away(PodHardening setting, String how,
                                                                         UnaryOperator<PodSpec> weaken) {
        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(weaken.apply(hardened()), "gvisor");

        assertThat(missing.keySet()).containsExactly(setting);
    }

    @Test
    void should_report_nothing_when_the_pod_is_as_hardened_as_the_engines() {
        assertThat(PodHardening.missingFrom(hardened(), "gvisor")).isEmpty();
    }

    @Test
    void should_accept_settings_given_per_container_instead_of_per_pod() {
        PodSpec spec = hardened();
        spec.setSecurityContext(null);
        spec.getContainers().get(0).getSecurityContext().setRunAsNonRoot(true);
        spec.getContainers().get(0).getSecurityContext().setSeccompProfile(new SeccompProfileBuilder().withType("RuntimeDefault").build());

        assertThat(PodHardening.missingFrom(spec, "gvisor")).isEmpty();
    }

    @Test
    void should_not_check_the_runtime_class_when_none_is_required() {
        PodSpec spec = hardened();
        spec.setRuntimeClassName(null);

        assertThat(PodHardening.missingFrom(spec, null)).isEmpty();
    }

    @Test
    void should_check_every_container_and_say_which_when_a_second_one_is_weak() {
        PodSpec spec = hardened();
        spec.getContainers().add(new PodSpecBuilder().addNewContainer().withName("sidecar").endContainer().build()
                .getContainers().get(0));

        Map<PodHardening, List<String>> missing = PodHardening.missingFrom(spec, "gvisor");

        assertThat(missing.get(PodHardening.READ_ONLY_ROOT_FILESYSTEM))
                .containsExactly("container sidecar: readOnlyRootFilesystem=null");
        assertThat(missing.keySet()).containsExactly(PodHardening.NO_PRIVILEGE_ESCALATION,
                PodHardening.DROP_ALL_CAPABILITIES, PodHardening.READ_ONLY_ROOT_FILESYSTEM);
    }
}
