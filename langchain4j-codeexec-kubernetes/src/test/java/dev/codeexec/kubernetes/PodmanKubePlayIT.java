package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The harness itself: it plays a pod, execs in it as the pod's user, and always leaves nothing behind. */
class PodmanKubePlayIT {

    @BeforeAll
    static void podman() {
        PodmanKubePlay.requirePodman();
    }

    @Test
    void should_exec_as_the_pods_user_when_a_minimal_pod_is_played() {
        Pod pod = minimalPod(name());
        Path yaml;
        try (PodmanKubePlay play = PodmanKubePlay.play(pod)) {
            yaml = play.yaml();
            PodmanKubePlay.Result r = play.exec("id -u; id -g; echo $PATH");

            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout().lines().toList()).containsExactly("4321", "4321", PodmanKubePlay.PATH);
            assertThat(play.execAs("0", "id -u").stdout().strip()).as("a probe can be prepared as root").isEqualTo("0");
            assertThat(pod.getSpec().getContainers().get(0).getImage()).as("the caller's pod is not changed")
                    .isEqualTo("python:3.12-slim");
        }
        assertThat(podExists(pod)).as("taken down on close").isFalse();
        assertThat(yaml).doesNotExist();
    }

    @Test
    void should_take_the_pod_down_when_its_container_cannot_start() {
        Pod pod = new PodBuilder(minimalPod(name())).editSpec().editFirstContainer()
                .withCommand("/no/such/program").endContainer().endSpec().build();

        assertThatThrownBy(() -> PodmanKubePlay.play(pod).close()).isInstanceOf(IllegalStateException.class);

        assertThat(podExists(pod)).isFalse();
    }

    static String name() {
        return "codeexec-play-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The smallest pod the harness plays: a sleeping container as uid 4321, relative command, no PATH. */
    static Pod minimalPod(String name) {
        return new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withRestartPolicy("Never")
                .withNewSecurityContext().withRunAsUser(4321L).withRunAsGroup(4321L).endSecurityContext()
                .addNewContainer().withName("main").withImage("python:3.12-slim").withCommand("sleep", "infinity")
                .endContainer().endSpec().build();
    }

    static boolean podExists(Pod pod) {
        try {
            Process p = new ProcessBuilder(List.of(PodmanKubePlay.requirePodman(), "pod", "exists",
                    pod.getMetadata().getName())).start();
            return p.waitFor() == 0;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
