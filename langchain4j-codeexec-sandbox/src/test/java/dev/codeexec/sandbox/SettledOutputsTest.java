package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collection that needs no pause of the kernel: only a real, empty {@code out/} and globs under it settle it; a
 * link, an entry, a missing {@code out/} or a glob elsewhere leave it to the paused collection.
 */
class SettledOutputsTest {

    @TempDir
    Path root;

    @Test
    void should_settle_an_empty_manifest_when_out_is_a_real_empty_directory() throws IOException {
        Files.createDirectory(root.resolve("out"));

        Optional<OutputManifest> m = SettledOutputs.emptyOut(root, OutputSpec.DEFAULT);

        assertThat(m).isPresent();
        assertThat(m.get().files()).isEmpty();
        assertThat(m.get().anyLimitHit()).isFalse();
    }

    @Test
    void should_not_settle_when_out_has_an_entry() throws IOException {
        Files.createDirectories(root.resolve("out/sub"));

        assertThat(SettledOutputs.emptyOut(root, OutputSpec.DEFAULT)).isEmpty();
    }

    @Test
    void should_not_settle_when_out_is_a_link_even_to_an_empty_directory() throws IOException {
        Path elsewhere = Files.createDirectory(root.resolve("elsewhere"));
        Files.createSymbolicLink(root.resolve("out"), elsewhere);

        assertThat(SettledOutputs.emptyOut(root, OutputSpec.DEFAULT)).isEmpty();
        // Positive control: the same empty directory, at out/ itself, settles it.
        Files.delete(root.resolve("out"));
        Files.move(elsewhere, root.resolve("out"));
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.DEFAULT)).isPresent();
    }

    @Test
    void should_not_settle_when_out_is_missing_or_a_file() throws IOException {
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.DEFAULT)).isEmpty();
        Files.writeString(root.resolve("out"), "x");
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.DEFAULT)).isEmpty();
    }

    @Test
    void should_not_settle_when_a_glob_reaches_beyond_out() throws IOException {
        Files.createDirectory(root.resolve("out"));

        assertThat(SettledOutputs.emptyOut(root, OutputSpec.builder().globs("work/**").build())).isEmpty();
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.builder().globs("out/**", "**/*.png").build())).isEmpty();
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.builder().globs("out/../work/**").build())).isEmpty();
        assertThat(SettledOutputs.emptyOut(root, OutputSpec.builder().globs("out/*.png").build())).isPresent();
    }
}
