package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The table from the API server's answers and pod statuses to this library's exceptions and sentences. */
class PodFailuresTest {

    static KubernetesClientException failure(int code, String message) {
        return new KubernetesClientException(new StatusBuilder().withCode(code).withMessage(message).build());
    }

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of(failure(401, "Unauthorized"), BackendUnavailableException.class, "credentials"),
                Arguments.of(failure(403, "pods is forbidden: User \"u\" cannot create resource \"pods\""),
                        BackendUnavailableException.class, "RBAC must allow verb 'create' on 'pods'"),
                Arguments.of(failure(403, "exceeded quota: q, requested: pods=1"), BackendUnavailableException.class,
                        "no quota left"),
                Arguments.of(failure(404, "namespaces \"agents\" not found"), BackendUnavailableException.class,
                        "does the namespace exist"),
                Arguments.of(failure(422, "Pod \"x\" is invalid: spec.runtimeClassName"), InvalidSpecException.class,
                        "check the PodTemplate"),
                Arguments.of(failure(500, "etcd timeout"), BackendUnavailableException.class, "HTTP 500"),
                Arguments.of(new KubernetesClientException("Operation failed", new ConnectException(
                        "Connection refused")), BackendUnavailableException.class,
                        "https://k8s.example:6443 is unreachable (ConnectException: Connection refused)"));
    }

    @ParameterizedTest
    @MethodSource("answers")
    void should_map_each_api_answer_to_a_typed_exception_with_a_clear_message(KubernetesClientException e,
                                                                             Class<?> type, String message) {
        CodeExecException mapped = PodFailures.translate(e, "create", "pods", "agents", "https://k8s.example:6443");

        assertThat(mapped).isInstanceOf(type).hasMessageContaining(message).hasCause(e);
    }

    static Pod pod(PodStatus status) {
        return new PodBuilder().withNewMetadata().withName("p").endMetadata().withStatus(status).build();
    }

    @Test
    void should_read_start_failures_and_leave_a_pod_that_may_still_start_alone() {
        assertThat(PodFailures.startFailure(pod(StatusSetter.waiting("ErrImagePull", "not found")), "img:1"))
                .get().asString().contains("could not pull image 'img:1'").contains("ErrImagePull: not found");
        assertThat(PodFailures.startFailure(pod(StatusSetter.waiting("ContainerCreating", null)), "img:1")).isEmpty();
        assertThat(PodFailures.startFailure(pod(StatusSetter.unschedulable()), "img:1")).isEmpty();
        assertThat(PodFailures.startFailure(pod(StatusSetter.ready()), "img:1")).isEmpty();
        assertThat(PodFailures.ready(pod(StatusSetter.ready()))).isTrue();
        assertThat(PodFailures.ready(pod(StatusSetter.waiting("ContainerCreating", null)))).isFalse();
    }

    @Test
    void should_name_why_a_pod_is_gone_and_nothing_for_a_live_one() {
        assertThat(PodFailures.goneReason(null)).get().asString().contains("deleted");
        assertThat(PodFailures.goneReason(pod(StatusSetter.evicted()))).get().asString().contains("evicted");
        assertThat(PodFailures.goneReason(pod(StatusSetter.oomKilled()))).get().asString().contains("OOMKilled");
        Pod deleting = pod(StatusSetter.ready());
        deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
        assertThat(PodFailures.goneReason(deleting)).get().asString().contains("being deleted");
        assertThat(PodFailures.goneReason(pod(StatusSetter.ready()))).isEmpty();
        assertThat(PodFailures.pending(pod(StatusSetter.unschedulable()))).contains("Unschedulable")
                .contains("Insufficient memory");
    }
}
