package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.beans.PropertyDescriptor;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;

/** The metadata IDEs complete {@code codeexec.*} from: every property described, the closed value sets hinted. */
class ConfigurationMetadataTest {

    private static JsonNode read(String resource) throws Exception {
        try (InputStream in = CodeExecProperties.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource + " on the class path").isNotNull();
            return new ObjectMapper().readTree(in);
        }
    }

    /** Name to type of every property of the generated metadata. */
    static Map<String, String> types() throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (JsonNode p : read("META-INF/spring-configuration-metadata.json").path("properties")) {
            out.put(p.path("name").asText(), p.path("type").asText());
        }
        return out;
    }

    /** The keys the classes bind, from their JavaBean properties: a group is a class of this package. */
    private static void bound(Class<?> type, String prefix, List<String> out) {
        for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
            if (d.getName().equals("class") || d.getReadMethod() == null) {
                continue;
            }
            String name = prefix + "." + d.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
            if (d.getPropertyType().getPackageName().equals(CodeExecProperties.class.getPackageName())) {
                bound(d.getPropertyType(), name, out);
            } else {
                out.add(name);
            }
        }
    }

    @Test
    void should_list_every_key_the_properties_classes_bind() throws Exception {
        // The unknown-key check suggests properties from this metadata: a group missing from it (as
        // codeexec.python-kernel.* once was, for lack of @NestedConfigurationProperty) would never be suggested, nor
        // completed by IDEs.
        List<String> bound = new ArrayList<>();
        bound(CodeExecProperties.class, "codeexec", bound);
        assertThat(bound).contains("codeexec.python-kernel.idle-timeout", "codeexec.e2b.metadata",
                "codeexec.ignore-unknown-properties");
        assertThat(types().keySet()).containsExactlyInAnyOrderElementsOf(bound);
    }

    @Test
    void should_describe_every_property_and_hint_the_backends_profiles_and_network_modes() throws Exception {
        JsonNode generated = read("META-INF/spring-configuration-metadata.json");
        List<String> names = new ArrayList<>();
        for (JsonNode p : generated.path("properties")) {
            names.add(p.path("name").asText());
            assertThat(p.path("description").asText()).as(p.path("name").asText() + " has a description")
                    .isNotBlank();
        }
        assertThat(names).contains("codeexec.backend", "codeexec.default-timeout", "codeexec.approval-timeout",
                "codeexec.artifacts.dir", "codeexec.policy.allow", "codeexec.sandbox.profile",
                "codeexec.container.image", "codeexec.jupyter.python", "codeexec.local.base-dir", "codeexec.e2b.api-key",
                "codeexec.e2b.domain", "codeexec.e2b.api-url", "codeexec.e2b.template", "codeexec.e2b.workspace-mode",
                "codeexec.e2b.sandbox-timeout", "codeexec.e2b.internet-access", "codeexec.network.allow",
                "codeexec.network.deny", "codeexec.network.allow-others", "codeexec.network.max-connections",
                "codeexec.network.max-bytes", "codeexec.network.idle-timeout", "codeexec.network.connect-timeout",
                "codeexec.network.approval-timeout", "codeexec.kubernetes.image", "codeexec.kubernetes.namespace",
                "codeexec.kubernetes.context", "codeexec.kubernetes.memory-bytes", "codeexec.kubernetes.cpus",
                "codeexec.kubernetes.workspace-bytes", "codeexec.kubernetes.runtime-class-name",
                "codeexec.kubernetes.ready-timeout", "codeexec.kubernetes.ttl", "codeexec.kubernetes.warm-pool",
                "codeexec.kubernetes.agent-sandbox", "codeexec.kubernetes.accept-unhardened-sandbox",
                "codeexec.kubernetes.sweep-leftovers", "codeexec.kubernetes.accept-other-network-policies",
                "codeexec.python-kernel.enabled", "codeexec.python-kernel.idle-timeout",
                "codeexec.ignore-unknown-properties");

        List<String> hinted = new ArrayList<>();
        for (JsonNode h : generated.path("hints")) {
            hinted.add(h.path("name").asText());
        }
        assertThat(hinted).contains("codeexec.backend", "codeexec.sandbox.profile", "codeexec.sandbox.network",
                "codeexec.e2b.workspace-mode");
        JsonNode backend = null;
        for (JsonNode h : generated.path("hints")) {
            if (h.path("name").asText().equals("codeexec.backend")) {
                backend = h;
            }
        }
        assertThat(backend.path("values").findValuesAsText("value")).containsExactly("local", "sandbox", "container",
                "jupyter", "e2b", "kubernetes");
    }
}
