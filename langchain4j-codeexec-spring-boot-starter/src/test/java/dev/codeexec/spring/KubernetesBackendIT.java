package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.Engine;
import dev.codeexec.kubernetes.KubernetesEngine;
import dev.codeexec.langchain4j.CodeExecution;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code codeexec.backend=kubernetes} started for real against fabric8's mock API server in CRUD mode, with the
 * application's {@link KubernetesClient} bean (the mock's client): the engine is built from properties alone and talks
 * to the cluster of that bean, never to a kubeconfig's.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesBackendIT {

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    @Test
    void should_start_the_engine_on_the_applications_client_when_configured_by_properties() {
        int before = server.getRequestCount();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"), "codeexec.audit-log=false",
                        "codeexec.backend=kubernetes", "codeexec.kubernetes.image=codeexec-python:bookworm",
                        "codeexec.kubernetes.namespace=codeexec-test", "codeexec.kubernetes.memory-bytes=268435456",
                        "codeexec.kubernetes.ready-timeout=30s")
                .withBean(KubernetesClient.class, KubernetesBackendIT::applicationClient).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Engine engine = ctx.getBean(Engine.class);
                    assertThat(engine).isInstanceOf(KubernetesEngine.class);
                    assertThat(engine.name()).isEqualTo("kubernetes");
                    assertThat(engine.describe()).isNotNull();
                    assertThat(ctx).hasSingleBean(CodeExecution.class);
                    // sweep-leftovers (on by default) looks for pods of dead engines at start-up: through the bean's
                    // client, so on the mock server.
                    assertThat(server.getRequestCount()).as("requests to the mock API server").isGreaterThan(before);
                });
    }

    @Test
    void should_hold_the_pods_to_the_egress_policy_of_the_network_properties() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"), "codeexec.audit-log=false",
                        "codeexec.backend=kubernetes", "codeexec.kubernetes.image=codeexec-python:bookworm",
                        "codeexec.kubernetes.namespace=codeexec-test", "codeexec.network.allow=pypi.org")
                .withBean(KubernetesClient.class, KubernetesBackendIT::applicationClient).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Engine engine = ctx.getBean(Engine.class);
                    assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROXY);
                    assertThat(engine.describe().networkAllowed()).isFalse();
                    assertThat(((KubernetesEngine) engine).egress()).hasValueSatisfying(egress ->
                            assertThat(egress.policy().toString()).contains("pypi.org"));
                });
    }

    /** The application's client bean on the mock server: a client of its own, since the context closes its beans. */
    private static KubernetesClient applicationClient() {
        return new KubernetesClientBuilder().withConfig(client.getConfiguration()).build();
    }
}
