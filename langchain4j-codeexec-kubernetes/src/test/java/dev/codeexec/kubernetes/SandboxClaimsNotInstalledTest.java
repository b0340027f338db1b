package dev.codeexec.kubernetes;

import dev.codeexec.engine.UnsupportedCapabilityException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cluster without the agent-sandbox CRDs: the mock server in expectations mode answers 404 to every path nobody
 * expected, as an API server does for a resource it does not serve.
 */
@EnableKubernetesMockClient
class SandboxClaimsNotInstalledTest {

    KubernetesMockServer server;
    KubernetesClient client;

    SandboxClaims claims() {
        return new SandboxClaims(client, "codeexec", SandboxClaimSettings.of("pool"), Clock.systemUTC());
    }

    @Test
    void should_say_the_crds_are_not_installed_when_the_claim_list_is_404() {
        assertThatThrownBy(() -> claims().requireInstalled())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageStartingWith("agent-sandbox CRDs not installed in this cluster")
                .hasMessageContaining("extensions.agents.x-k8s.io/v1beta1 sandboxclaims");
    }

    @Test
    void should_say_the_crds_are_not_installed_when_creating_a_claim_gets_404() {
        assertThatThrownBy(() -> claims().claim(Map.of(), List.of()))
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageStartingWith("agent-sandbox CRDs not installed in this cluster");
    }

    @Test
    void should_say_the_namespace_is_missing_when_creating_a_claim_gets_404_for_the_namespace() {
        server.expect().post().withPath("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/codeexec/sandboxclaims")
                .andReturn(404, Map.of("kind", "Status", "apiVersion", "v1", "status", "Failure", "code", 404,
                        "reason", "NotFound", "message", "namespaces \"codeexec\" not found",
                        "details", Map.of("name", "codeexec", "kind", "namespaces")))
                .once();

        assertThatThrownBy(() -> claims().claim(Map.of(), List.of()))
                .isInstanceOf(dev.codeexec.engine.BackendUnavailableException.class)
                .hasMessageContaining("namespace codeexec does not exist");
    }

    @Test
    void should_name_the_missing_permissions_when_the_claim_list_is_forbidden() {
        server.expect().get().withPath("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/codeexec/sandboxclaims?limit=1")
                .andReturn(403, Map.of("kind", "Status", "apiVersion", "v1", "status", "Failure", "code", 403,
                        "reason", "Forbidden", "message", "sandboxclaims is forbidden"))
                .once();

        assertThatThrownBy(() -> claims().requireInstalled())
                .isInstanceOf(dev.codeexec.engine.BackendUnavailableException.class)
                .hasMessageContaining("was forbidden")
                .hasMessageContaining("create, get, list, watch and delete on sandboxclaims");
    }
}
