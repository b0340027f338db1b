package dev.codeexec.artifact;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The snippet in docs/artifacts.md, compiled and run. Keep the two in step. */
class ArtifactsDocExampleTest {

    @TempDir
    Path dir;

    @Test
    void should_run_the_documented_example() {
        Path root = dir.resolve("artifacts");
        byte[] markdown = "# Q1\n".getBytes(StandardCharsets.UTF_8);

        // tag::usage[]
        ArtifactService artifacts = FileSystemArtifactService.at(root);

        ArtifactRef ref = artifacts.save("reports/q1.md", markdown, "text/markdown");
        String text = ref.toString();                                    // "artifact://reports/q1.md@1"

        Artifact latest = artifacts.load(ArtifactRef.parse("artifact://reports/q1.md"));
        Artifact first = artifacts.load("reports/q1.md", 1);
        List<Integer> versions = artifacts.versions("reports/q1.md");    // [1]
        List<String> names = artifacts.names();                          // [reports/q1.md]
        // end::usage[]

        assertThat(text).isEqualTo("artifact://reports/q1.md@1");
        assertThat(latest).isEqualTo(first);
        assertThat(latest.mimeType()).isEqualTo("text/markdown");
        assertThat(versions).containsExactly(1);
        assertThat(names).containsExactly("reports/q1.md");
    }
}
