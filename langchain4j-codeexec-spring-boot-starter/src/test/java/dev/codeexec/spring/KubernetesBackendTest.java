package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.kubernetes.BuilderSettings;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code codeexec.backend=kubernetes}: how {@code codeexec.kubernetes.*} binds and maps onto the engine's builder, the
 * client bean it takes, and every start-up error, each naming its property. None of them contacts a cluster.
 */
class KubernetesBackendTest {

    static final String IMAGE = "registry.example/codeexec-python:bookworm";

    @TempDir
    Path dir;

    private ApplicationContextRunner runner(String... properties) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                .withPropertyValues("codeexec.artifacts.dir=" + dir.resolve("artifacts"), "codeexec.audit-log=false")
                .withPropertyValues(properties);
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The properties as Spring binds them from an application's configuration. */
    private static KubernetesProperties bind(String... properties) {
        Map<String, String> map = new HashMap<>();
        for (String p : properties) {
            int eq = p.indexOf('=');
            map.put(p.substring(0, eq), p.substring(eq + 1));
        }
        return new Binder(new MapConfigurationPropertySource(map)).bind("codeexec", CodeExecProperties.class)
                .get().getKubernetes();
    }

    private static BuilderSettings settings(KubernetesProperties p, KubernetesClient client) {
        return BuilderSettings.of(KubernetesBackend.builder(p, new InMemoryArtifactService(), client));
    }

    /** A client configured for an address nothing listens on; building it contacts nothing. */
    private static KubernetesClient idleClient() {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:9")
                .withNamespace("from-client").build()).build();
    }

    @Test
    void should_map_every_property_onto_the_builder_when_all_are_set() {
        BuilderSettings s = settings(bind("codeexec.kubernetes.image= " + IMAGE + " ",
                "codeexec.kubernetes.namespace=agents", "codeexec.kubernetes.context=prod-eu",
                "codeexec.kubernetes.memory-bytes=268435456", "codeexec.kubernetes.cpus=0.5",
                "codeexec.kubernetes.workspace-bytes=104857600", "codeexec.kubernetes.runtime-class-name=gvisor",
                "codeexec.kubernetes.ready-timeout=45s", "codeexec.kubernetes.ttl=2h",
                "codeexec.kubernetes.warm-pool=3", "codeexec.kubernetes.agent-sandbox=python-pool",
                "codeexec.kubernetes.accept-unhardened-sandbox=true", "codeexec.kubernetes.sweep-leftovers=false",
                "codeexec.kubernetes.accept-other-network-policies=true"), null);

        assertThat(s).isEqualTo(new BuilderSettings(null, "prod-eu", "agents", IMAGE, 268435456L, 0.5, 104857600L,
                "gvisor", Duration.ofSeconds(45), Duration.ofHours(2), 3, "python-pool", true, false, true));
    }

    @Test
    void should_leave_the_engines_defaults_when_only_the_image_is_set() {
        BuilderSettings s = settings(bind("codeexec.kubernetes.image=" + IMAGE), null);

        assertThat(s).isEqualTo(new BuilderSettings(null, null, null, IMAGE, null, null, null, null, null, null, 0,
                null, false, true, false));
    }

    @Test
    void should_hand_the_applications_client_to_the_engine_when_the_context_has_one() {
        try (KubernetesClient client = idleClient()) {
            BuilderSettings s = settings(bind("codeexec.kubernetes.image=" + IMAGE,
                    "codeexec.kubernetes.namespace=agents"), client);
            assertThat(s.client()).isSameAs(client);
            assertThat(s.namespace()).as("the pods' namespace still applies").isEqualTo("agents");

            assertThatThrownBy(() -> settings(bind("codeexec.kubernetes.image=" + IMAGE,
                    "codeexec.kubernetes.context=prod-eu"), client))
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("codeexec.kubernetes.context")
                    .hasMessageContaining("has a KubernetesClient bean, which the engine uses");
        }
    }

    @Test
    void should_find_the_one_client_bean_and_refuse_to_guess_between_two() {
        try (KubernetesClient one = idleClient(); KubernetesClient two = idleClient()) {
            DefaultListableBeanFactory none = new DefaultListableBeanFactory();
            assertThat(KubernetesBackend.client(none)).as("the engine makes its own").isNull();

            DefaultListableBeanFactory single = new DefaultListableBeanFactory();
            single.registerSingleton("kubernetesClient", one);
            assertThat(KubernetesBackend.client(single)).isSameAs(one);

            DefaultListableBeanFactory both = new DefaultListableBeanFactory();
            both.registerSingleton("one", one);
            both.registerSingleton("two", two);
            assertThatThrownBy(() -> KubernetesBackend.client(both)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("2 KubernetesClient beans").hasMessageContaining("mark one @Primary");
        }
    }

    @Test
    void should_fail_at_start_up_naming_the_property_when_the_image_is_missing() {
        for (String image : List.of("codeexec.kubernetes.namespace=agents", "codeexec.kubernetes.image= ")) {
            runner("codeexec.backend=kubernetes", image).run(ctx -> {
                assertThat(ctx).as(image).hasFailed();
                assertThat(rootCause(ctx.getStartupFailure())).as(image)
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining("codeexec.kubernetes.image")
                        .hasMessageContaining("the kubernetes backend needs the workspace image");
            });
        }
    }

    @Test
    void should_fail_at_start_up_with_an_invalid_value_naming_the_property() {
        String[][] cases = {
            {"codeexec.kubernetes.memory-bytes=0", "codeexec.kubernetes.memory-bytes", "must be positive"},
            {"codeexec.kubernetes.cpus=-1", "codeexec.kubernetes.cpus", "must be positive"},
            {"codeexec.kubernetes.cpus=NaN", "codeexec.kubernetes.cpus", "must be positive"},
            {"codeexec.kubernetes.workspace-bytes=-4096", "codeexec.kubernetes.workspace-bytes", "must be positive"},
            {"codeexec.kubernetes.ready-timeout=0s", "codeexec.kubernetes.ready-timeout", "must be positive"},
            {"codeexec.kubernetes.ttl=-1m", "codeexec.kubernetes.ttl", "must be positive"},
            {"codeexec.kubernetes.warm-pool=-1", "codeexec.kubernetes.warm-pool", "must not be negative"},
            {"codeexec.kubernetes.namespace=Agents_Prod", "codeexec.kubernetes.namespace", "must be a Kubernetes name"},
            {"codeexec.kubernetes.namespace=a.b", "codeexec.kubernetes.namespace", "must be a Kubernetes name"},
            {"codeexec.kubernetes.runtime-class-name=gVisor", "codeexec.kubernetes.runtime-class-name",
                "must be a Kubernetes name"},
            {"codeexec.kubernetes.agent-sandbox=-pool", "codeexec.kubernetes.agent-sandbox",
                "must be a Kubernetes name"},
        };
        for (String[] c : cases) {
            runner("codeexec.backend=kubernetes", "codeexec.kubernetes.image=" + IMAGE, c[0]).run(ctx -> {
                assertThat(ctx).as(c[0]).hasFailed();
                assertThat(rootCause(ctx.getStartupFailure())).as(c[0])
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining(c[1]).hasMessageContaining(c[2]);
            });
        }
        runner("codeexec.backend=kubernetes", "codeexec.kubernetes.image=" + IMAGE, "codeexec.kubernetes.ttl=soon")
                .run(ctx -> assertThat(ctx).as("a value that is no duration fails in Spring's binder").hasFailed());
    }

    @Test
    void should_fail_at_start_up_naming_the_module_when_the_kubernetes_module_is_absent() {
        runner("codeexec.backend=kubernetes", "codeexec.kubernetes.image=" + IMAGE)
                .withClassLoader(new FilteredClassLoader("dev.codeexec.kubernetes")).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(rootCause(ctx.getStartupFailure())).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("codeexec.backend=kubernetes needs the module "
                                    + "dev.codeexec:langchain4j-codeexec-kubernetes on the class path");
                });
    }

    @Test
    void should_list_kubernetes_among_the_backends_when_none_is_configured() {
        runner().run(ctx -> assertThat(rootCause(ctx.getStartupFailure()))
                .hasMessageContaining("local, sandbox, container, jupyter, e2b or kubernetes"));
    }
}
