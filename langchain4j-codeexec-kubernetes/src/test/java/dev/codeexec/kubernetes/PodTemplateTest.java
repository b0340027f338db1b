package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PodTemplateTest {

    static PodTemplate.Builder base() {
        return PodTemplate.builder().image("codeexec-python:bookworm");
    }

    @Test
    void should_resolve_defaults_when_only_the_image_is_set() {
        PodTemplate t = base().build();

        assertThat(t.uid()).isEqualTo(PodLayout.DEFAULT_UID);
        assertThat(t.gid()).isEqualTo(PodLayout.DEFAULT_UID);
        assertThat(t.namespace()).isNull();
        assertThat(t.limits()).containsEntry("cpu", new Quantity("1")).containsEntry("memory", new Quantity("1Gi"))
                .containsEntry("ephemeral-storage", new Quantity("2Gi"));
        assertThat(t.requests()).containsEntry("cpu", new Quantity("250m"));
        assertThat(t.workspaceSizeLimit()).isEqualTo(new Quantity("512Mi"));
        assertThat(t.tmpSizeLimit()).isEqualTo(new Quantity("64Mi"));
        assertThat(t.activeDeadline()).isEqualTo(Duration.ofHours(12));
        assertThat(t.env()).containsExactly(Map.entry("PATH", PodTemplate.DEFAULT_PATH));
        assertThat(t.egressProxy()).isNull();
    }

    @Test
    void should_equal_itself_when_rebuilt_from_its_builder() {
        PodTemplate t = base().namespace("agents").runtimeClassName("kata").egressProxy("[fd00::20]:3128")
                .labels(Map.of("team", "a")).build();

        assertThat(t.toBuilder().build()).isEqualTo(t).hasSameHashCodeAs(t);
        assertThat(t.egressProxy().url()).isEqualTo("http://[fd00::20]:3128");
        assertThat(t.toString()).contains("kata");
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.image(null), "image must be set"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.image("a b"), "white space"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.user(0, 0), "never runs as root"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.user(1000, 0), "never runs as root"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.namespace("Bad_NS"), "namespace 'Bad_NS'"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.imagePullPolicy("Sometimes"),
                        "imagePullPolicy 'Sometimes'"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.memory("2Gi", "1Gi"),
                        "memory request (2Gi) must not exceed its limit (1Gi)"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.cpu("100m", "lots"),
                        "cpu limit 'lots' is not a quantity"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.workspaceSizeLimit("0"),
                        "workspaceSizeLimit (0) must be positive"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.activeDeadline(Duration.ZERO),
                        "activeDeadline"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.labels(Map.of("dev.codeexec/engine", "x")),
                        "uses the engine's own prefix"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.labels(Map.of("team", "a b")),
                        "not a valid label value"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.env(Map.of("HOME", "/")),
                        "env 'HOME' cannot be set: the engine sets it"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.env(Map.of("https_proxy", "x")),
                        "the engine sets it"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.egressProxy("proxy.ns.svc:3128"),
                        "must be an IP address and port"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.egressProxy("10.0.0.300:3128"),
                        "not an IPv4 address"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.egressProxy("10.0.0.3:0"),
                        "must be an IP address and port"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.egressProxyPods(Map.of("a", "b"), null, 1),
                        "needs egressProxy"),
                Arguments.of((UnaryOperator<PodTemplate.Builder>) b -> b.runtimeClassName("G Visor"),
                        "runtimeClassName 'G Visor'"));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void should_refuse_with_a_message_naming_the_setting_when_a_setting_is_invalid(
            UnaryOperator<PodTemplate.Builder> change, String message) {
        assertThatThrownBy(() -> change.apply(base()).build()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining(message);
    }
}
