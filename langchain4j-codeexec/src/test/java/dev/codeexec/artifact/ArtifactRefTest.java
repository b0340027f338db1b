package dev.codeexec.artifact;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ArtifactRefTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "artifact://report.md@3      | report.md     | 3",
            "artifact://report.md        | report.md     | -",
            "report.md@12                | report.md     | 12",
            "artifact://reports/q1.md@1  | reports/q1.md | 1",
            "artifact://a@b              | a@b           | -",
            "artifact://a@b@2            | a@b           | 2",
            "artifact://a@               | a@            | -",
            "artifact://@3               | @3            | -",
            "artifact://v@1x             | v@1x          | -",
            "artifact://v@1234567890     | v@1234567890  | -",
            "artifact://v@\u0663         | v@\u0663      | -",
    })
    void should_split_the_version_at_the_last_at_sign_only_when_ascii_digits_follow(
            String text, String name, Integer version) {
        ArtifactRef ref = ArtifactRef.parse(text);

        assertThat(ref.name()).isEqualTo(name);
        assertThat(ref.version()).isEqualTo(version);
    }

    @Test
    void should_print_the_reference_it_was_parsed_from() {
        assertThat(ArtifactRef.parse("artifact://reports/q1.md@3")).hasToString("artifact://reports/q1.md@3");
        assertThat(ArtifactRef.latest("x")).hasToString("artifact://x");
    }

    @ParameterizedTest
    @ValueSource(strings = {"artifact://", "artifact://x@0", "  "})
    void should_refuse_an_empty_name_or_version_0(String text) {
        assertThatThrownBy(() -> ArtifactRef.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void should_recognise_only_the_artifact_scheme() {
        assertThat(ArtifactRef.isArtifactRef("artifact://x")).isTrue();
        assertThat(ArtifactRef.isArtifactRef("workspace://x")).isFalse();
        assertThat(ArtifactRef.isArtifactRef(null)).isFalse();
    }
}
