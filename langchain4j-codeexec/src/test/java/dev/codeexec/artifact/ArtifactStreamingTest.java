package dev.codeexec.artifact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code saveStream} and {@code read}: the file-system store streams both ways, checks integrity, saves nothing
 * when the source fails; the defaults work on the in-memory store. */
class ArtifactStreamingTest {

    @TempDir
    Path tmp;

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7);
        }
        return b;
    }

    @Test
    void should_store_and_lend_the_same_bytes_when_streamed() {
        for (ArtifactService store : new ArtifactService[] {FileSystemArtifactService.at(tmp.resolve("s")),
                new InMemoryArtifactService()}) {
            byte[] content = bytes(300_000);

            ArtifactRef ref = store.saveStream("big.bin", new ByteArrayInputStream(content), null);
            byte[] back = store.read("big.bin", ref.version(), (in, size) -> {
                assertThat(size).isEqualTo(content.length);
                return in.readAllBytes();
            });

            assertThat(back).isEqualTo(content);
            assertThat(store.load("big.bin", 1).content()).isEqualTo(content);
        }
    }

    @Test
    void should_save_nothing_when_the_source_stream_fails() {
        FileSystemArtifactService store = FileSystemArtifactService.at(tmp.resolve("s"));
        InputStream failing = new InputStream() {
            private int n;

            @Override
            public int read() throws IOException {
                if (n++ > 1000) {
                    throw new IOException("source broke");
                }
                return 1;
            }
        };

        assertThatThrownBy(() -> store.saveStream("x.bin", failing, null)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("source broke");
        assertThat(store.versions("x.bin")).isEmpty();
    }

    @Test
    void should_fail_a_read_that_reaches_the_end_of_damaged_bytes() throws Exception {
        Path root = tmp.resolve("s");
        FileSystemArtifactService store = FileSystemArtifactService.at(root);
        store.saveStream("d.bin", new ByteArrayInputStream(bytes(1000)), null);
        byte[] damaged = bytes(1000);
        damaged[500] ^= 1;
        Files.write(root.resolve("d.bin/@versions/v1.bin"), damaged);

        assertThatThrownBy(() -> store.read("d.bin", 1, (in, size) -> in.readAllBytes()))
                .isInstanceOf(UncheckedIOException.class).hasMessageContaining("damaged");
        // The control: an intact version reads.
        store.saveStream("ok.bin", new ByteArrayInputStream(bytes(1000)), null);
        assertThat(Arrays.equals(store.read("ok.bin", 1, (in, size) -> in.readAllBytes()), bytes(1000))).isTrue();
    }

    @Test
    void should_refuse_a_version_that_does_not_exist_when_read() {
        FileSystemArtifactService store = FileSystemArtifactService.at(tmp.resolve("s"));
        store.save("a.bin", new byte[1], null);

        assertThatThrownBy(() -> store.read("a.bin", 2, (in, size) -> null))
                .isInstanceOf(ArtifactNotFoundException.class);
        assertThatThrownBy(() -> store.read("missing.bin", 1, (in, size) -> null))
                .isInstanceOf(ArtifactNotFoundException.class);
    }
}
