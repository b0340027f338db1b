package dev.codeexec.artifact;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ArtifactNamesTest {

    @Test
    void should_split_a_valid_name_into_segments() {
        assertThat(ArtifactNames.segments("reports/2024/q1.md")).containsExactly("reports", "2024", "q1.md");
    }

    @Test
    void should_say_which_rule_a_name_breaks() {
        assertThatThrownBy(() -> ArtifactNames.validate("a//b")).hasMessageContaining("empty segment");
        assertThatThrownBy(() -> ArtifactNames.validate("a/../b")).hasMessageContaining("'..' segment");
        assertThatThrownBy(() -> ArtifactNames.validate("/a")).hasMessageContaining("absolute");
        assertThatThrownBy(() -> ArtifactNames.validate("x".repeat(300))).hasMessageContaining("300 characters");
        assertThatThrownBy(() -> ArtifactNames.validate("ok/b\u0000d"))
                .hasMessageContaining("segment 'b\\u0000d' has a character outside [A-Za-z0-9._-]");
    }

    @Test
    void should_normalise_mime_types() {
        assertThat(ArtifactNames.mimeType(null)).isEqualTo("application/octet-stream");
        assertThat(ArtifactNames.mimeType(" text/plain ")).isEqualTo("text/plain");
    }

    @Test
    void should_shorten_version_lists_to_ranges() {
        assertThat(ArtifactNotFoundException.ranges(List.of(1, 2, 3, 5, 7, 8))).isEqualTo("1-3, 5, 7-8");
        assertThat(ArtifactNotFoundException.ranges(List.of(4))).isEqualTo("4");
        assertThat(ArtifactNotFoundException.ranges(List.of())).isEmpty();
    }
}
