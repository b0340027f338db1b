package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The API server's refusals and a pod that cannot start, each a typed exception with a message that says why. */
@EnableKubernetesMockClient(crud = true)
class PodWorkspacesErrorsTest {

    static final String NS = PodWorkspacesTest.NS;
    static final String PODS = "/api/v1/namespaces/" + NS + "/pods";

    KubernetesMockServer server;
    KubernetesClient client;
    StatusSetter kubelet;
    PodWorkspaces ws;

    @BeforeEach
    void start() {
        kubelet = new StatusSetter(client, NS);
        ws = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "engine1",
                PodWorkspaces.Settings.defaults().withReadyTimeout(Duration.ofSeconds(2)));
    }

    @AfterEach
    void stop() {
        ws.close();
        kubelet.close();
    }

    static Status status(int code, String reason, String message) {
        return new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason).withMessage(message).build();
    }

    int enginePods() {
        return client.pods().inNamespace(NS).withLabel(PodLabels.ENGINE, "engine1").list().getItems().size();
    }

    @Test
    void should_name_verb_resource_and_namespace_when_rbac_forbids_creating_pods() {
        server.expect().post().withPath(PODS).andReturn(403, status(403, "Forbidden", "pods is forbidden: User "
                + "\"system:serviceaccount:agents:app\" cannot create resource \"pods\" in API group \"\" in the "
                + "namespace \"agents\"")).once();

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("forbidden: the engine may not create pods in namespace 'agents'")
                .hasMessageContaining("RBAC must allow verb 'create' on 'pods'")
                .hasMessageContaining("system:serviceaccount:agents:app");
        assertThat(ws.pods()).isEmpty();
    }

    @Test
    void should_say_the_quota_is_used_up_when_a_resource_quota_refuses_the_pod() {
        server.expect().post().withPath(PODS).andReturn(403, status(403, "Forbidden", "pods \"codeexec-x\" is "
                + "forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=8Gi, "
                + "limited: limits.memory=8Gi")).once();

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("no quota left to create pods in namespace 'agents'")
                .hasMessageContaining("exceeded quota: compute");
    }

    @Test
    void should_retry_with_a_new_name_when_the_name_is_taken() {
        server.expect().post().withPath(PODS).andReturn(409, status(409, "AlreadyExists", "pods \"x\" already "
                + "exists")).once();

        String name = ws.create("ws-1");

        assertThat(client.pods().inNamespace(NS).withName(name).get()).isNotNull();
        assertThat(enginePods()).isEqualTo(1);
    }

    @Test
    void should_give_up_naming_the_conflicts_when_every_name_is_taken() {
        server.expect().post().withPath(PODS).andReturn(409, status(409, "AlreadyExists", "exists")).times(5);

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("5 random names were all taken (409 Conflict)");
    }

    @Test
    void should_name_the_image_and_reason_and_delete_the_pod_when_the_image_cannot_be_pulled() {
        kubelet.next = p -> StatusSetter.waiting("ImagePullBackOff",
                "Back-off pulling image \"codeexec-python:bookworm\"");

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("could not pull image 'codeexec-python:bookworm'")
                .hasMessageContaining("ImagePullBackOff").hasMessageContaining("the engine never pulls");
        assertThat(enginePods()).isZero();
    }

    @Test
    void should_name_the_container_error_when_the_container_cannot_be_created() {
        kubelet.next = p -> StatusSetter.waiting("CreateContainerConfigError",
                "container has runAsNonRoot and image will run as root");

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("CreateContainerConfigError");
        assertThat(enginePods()).isZero();
    }

    @Test
    void should_say_the_pod_cannot_be_scheduled_when_no_node_fits_it() {
        kubelet.next = p -> StatusSetter.unschedulable();

        assertThatThrownBy(() -> ws.create("ws-1")).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("not Ready within 2 s")
                .hasMessageContaining("cannot be scheduled on any node (Unschedulable: 0/3 nodes are available");
        assertThat(enginePods()).isZero();
    }

    @Test
    void should_name_the_api_server_url_when_it_is_unreachable() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + port;
        try (KubernetesClient down = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl(url).withRequestRetryBackoffLimit(0).build()).build()) {

            assertThatThrownBy(() -> new PodWorkspaces(down, PodWorkspacesTest.TEMPLATE, "engine2",
                    PodWorkspaces.Settings.defaults())).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("127.0.0.1:" + port).hasMessageContaining("is unreachable")
                    .hasMessageContaining("create leases in namespace 'agents'");
        }
    }

    @Test
    void should_delete_the_lease_when_the_network_policy_is_forbidden() {
        server.expect().post().withPath("/apis/networking.k8s.io/v1/namespaces/" + NS + "/networkpolicies")
                .andReturn(403, status(403, "Forbidden", "networkpolicies is forbidden")).once();
        PodTemplate other = PodWorkspacesTest.TEMPLATE.toBuilder().runtimeClassName("gvisor").build();

        assertThatThrownBy(() -> new PodWorkspaces(client, other, "engine3", PodWorkspaces.Settings.defaults()))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("may not create networkpolicies in namespace 'agents'");
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine3")).get()).isNull();
    }
}
