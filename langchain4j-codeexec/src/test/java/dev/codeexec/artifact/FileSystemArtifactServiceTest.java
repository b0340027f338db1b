package dev.codeexec.artifact;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PathEscapeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class FileSystemArtifactServiceTest extends ArtifactServiceContractTest {

    @TempDir
    Path tmp;

    Path root;

    @Override
    protected ArtifactService newService() {
        root = tmp.resolve("store");
        return FileSystemArtifactService.at(root);
    }

    private Path versionsDir(String name) {
        return root.resolve(name).resolve(FileSystemArtifactService.VERSIONS_DIR);
    }

    private static List<String> listing(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    // ---------------------------------------------------------------- durability

    @Test
    void should_see_every_version_when_a_new_instance_opens_the_same_root() {
        service.save("reports/q1.md", utf8("# Q1"), "text/markdown");
        service.save("reports/q1.md", utf8("# Q1 v2"), "text/markdown");
        service.save("chart.png", new byte[] {(byte) 0x89, 'P', 'N', 'G'}, "image/png");

        ArtifactService restarted = FileSystemArtifactService.at(root);

        assertThat(restarted.names()).containsExactly("chart.png", "reports/q1.md");
        assertThat(restarted.versions("reports/q1.md")).containsExactly(1, 2);
        assertThat(restarted.load("reports/q1.md", 1).content()).isEqualTo(utf8("# Q1"));
        assertThat(restarted.load("reports/q1.md")).hasValueSatisfying(a -> {
            assertThat(a.content()).isEqualTo(utf8("# Q1 v2"));
            assertThat(a.mimeType()).isEqualTo("text/markdown");
        });
        assertThat(restarted.load("chart.png", 1).mimeType()).isEqualTo("image/png");
        assertThat(restarted.save("reports/q1.md", utf8("# Q1 v3"), "text/markdown").version()).isEqualTo(3);
    }

    @Test
    void should_store_the_bytes_verbatim_in_the_documented_layout() throws IOException {
        byte[] bytes = {0, 10, 13, (byte) 0xfe};
        service.save("reports/raw.bin", bytes, "application/octet-stream");

        assertThat(listing(versionsDir("reports/raw.bin"))).containsExactly("latest", "v1.bin", "v1.json");
        assertThat(Files.readString(versionsDir("reports/raw.bin").resolve("latest"))).isEqualTo("1\n");
        assertThat(Files.readAllBytes(versionsDir("reports/raw.bin").resolve("v1.bin"))).isEqualTo(bytes);
        assertThat(Files.readString(versionsDir("reports/raw.bin").resolve("v1.json")))
                .contains("\"mimeType\" : \"application/octet-stream\"").contains("\"size\" : 4");
    }

    @Test
    void should_ignore_temp_files_and_unfinished_claims_when_a_save_crashed() throws IOException {
        service.save("crashy", utf8("good"), "text/plain");
        Path dir = versionsDir("crashy");
        // A crash after writing part of the bytes, and one after claiming number 2 but before publishing it.
        Files.write(dir.resolve(FileSystemArtifactService.TEMP_PREFIX + "dead-beef"), utf8("half a fi"));
        Files.write(dir.resolve("v2.json"), utf8("{\"mimeType\":\"text/plain\"}"));
        // A name whose only save crashed before its number was claimed.
        Files.createDirectories(versionsDir("never"));
        Files.write(versionsDir("never").resolve(FileSystemArtifactService.TEMP_PREFIX + "x"), utf8("partial"));

        assertThat(service.versions("crashy")).containsExactly(1);
        assertThat(service.load("crashy")).hasValueSatisfying(a -> assertThat(a.content()).isEqualTo(utf8("good")));
        assertThatThrownBy(() -> service.load("crashy", 2)).isInstanceOf(ArtifactNotFoundException.class)
                .hasMessageContaining("existing versions: 1 ");
        assertThat(service.names()).containsExactly("crashy");
        assertThat(service.versions("never")).isEmpty();
        // the burned number is skipped, not reused, so the half-made claim can never be completed over
        assertThat(service.save("crashy", utf8("next"), "text/plain").version()).isEqualTo(3);

        service.delete("crashy");
        assertThat(Files.exists(root.resolve("crashy"))).as("delete clears leftovers too").isFalse();
    }

    @Test
    void should_refuse_a_version_when_its_bytes_were_damaged_on_disk() throws IOException {
        service.save("precious", utf8("original content"), "text/plain");
        Files.write(versionsDir("precious").resolve("v1.bin"), utf8("tampered content"));

        assertThatThrownBy(() -> service.load("precious", 1)).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("'precious' version 1 is damaged")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(tmp.toString()));
    }

    @Test
    void should_give_distinct_versions_when_two_instances_share_a_root() throws Exception {
        ArtifactService other = FileSystemArtifactService.at(root);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Map<Integer, String>>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                ArtifactService s = t % 2 == 0 ? service : other;
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    Map<Integer, String> mine = new HashMap<>();
                    for (int i = 0; i < 25; i++) {
                        String body = "t" + thread + "-" + i;
                        mine.put(s.save("both", utf8(body), null).version(), body);
                    }
                    return mine;
                }));
            }
            start.countDown();
            Map<Integer, String> all = new HashMap<>();
            for (Future<Map<Integer, String>> f : futures) {
                f.get(120, TimeUnit.SECONDS).forEach((v, body) ->
                        assertThat(all.put(v, body)).as("version %s given twice", v).isNull());
            }
            assertThat(service.versions("both")).containsExactlyElementsOf(IntStream.rangeClosed(1, 200).boxed().toList());
            all.forEach((v, body) -> assertThat(other.load("both", v).content()).isEqualTo(utf8(body)));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void should_give_distinct_versions_when_two_processes_and_this_one_save_one_name() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        try {
            for (String tag : List.of("p1", "p2")) {
                children.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                        ArtifactSaveLoop.class.getName(), root.toString(), "multi", "100", tag)
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start());
            }
            for (Process p : children) { // release both children together, then save from here as well
                try (OutputStream in = p.getOutputStream()) {
                    in.write('\n');
                }
            }
            Map<Integer, String> all = new HashMap<>();
            for (int i = 0; i < 100; i++) {
                String body = "parent-" + i;
                all.put(service.save("multi", utf8(body), "text/plain").version(), body);
            }
            for (Process p : children) {
                List<String> lines;
                try (BufferedReader out = new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    lines = out.lines().toList();
                }
                assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child finished").isTrue();
                assertThat(p.exitValue()).isZero();
                for (String line : lines) {
                    String[] parts = line.split("\t");
                    assertThat(all.put(Integer.parseInt(parts[0]), parts[1]))
                            .as("version %s given twice", parts[0]).isNull();
                }
            }

            assertThat(all).hasSize(300);
            assertThat(service.versions("multi"))
                    .containsExactlyElementsOf(IntStream.rangeClosed(1, 300).boxed().toList());
            all.forEach((v, body) -> assertThat(service.load("multi", v).content()).isEqualTo(utf8(body)));
        } finally {
            children.forEach(Process::destroyForcibly);
        }
    }

    // ---------------------------------------------------------------- symlink attacks

    /** A directory outside the root holding a real, loadable artifact "secret" (made by a second store). */
    private Path outsideWithSecret() {
        Path outside = tmp.resolve("outside");
        FileSystemArtifactService.at(outside).save("secret", utf8("TOP SECRET"), "text/plain");
        return outside;
    }

    @Test
    void should_not_write_outside_the_root_when_a_planted_directory_link_points_out() throws IOException {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.createSymbolicLink(root.resolve("evil"), outside);

        assertThatThrownBy(() -> service.save("evil/x", utf8("payload"), "text/plain"))
                .isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("'evil/x'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(tmp.toString()));
        assertThat(listing(outside)).as("nothing created outside").isEmpty();

        // positive control: the same save under a real directory works
        assertThat(service.save("good/x", utf8("payload"), "text/plain").version()).isEqualTo(1);
        assertThat(Files.isRegularFile(versionsDir("good/x").resolve("v1.bin"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

    @Test
    void should_not_read_list_or_delete_outside_the_root_when_a_planted_link_points_out() throws IOException {
        Path outside = outsideWithSecret();
        Files.createSymbolicLink(root.resolve("evil"), outside);

        assertThatThrownBy(() -> service.load("evil/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> service.load("evil/secret", 1)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> service.load(ArtifactRef.parse("artifact://evil/secret@1")))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> service.versions("evil/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> service.delete("evil/secret")).isInstanceOf(PathEscapeException.class);
        assertThat(service.names()).doesNotContain("evil/secret").isEmpty();

        // positive control: the secret is real and intact, readable by the store it belongs to
        assertThat(FileSystemArtifactService.at(outside).load("secret", 1).content()).isEqualTo(utf8("TOP SECRET"));
    }

    @Test
    void should_not_follow_a_planted_link_in_place_of_a_versions_directory() throws IOException {
        Path outside = outsideWithSecret();
        Files.createDirectories(root.resolve("innocent"));
        Files.createSymbolicLink(versionsDir("innocent"), outside.resolve("secret").resolve("@versions"));

        assertThatThrownBy(() -> service.load("innocent")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> service.save("innocent", utf8("x"), null)).isInstanceOf(PathEscapeException.class);
        assertThat(service.names()).isEmpty();
        assertThat(FileSystemArtifactService.at(outside).versions("secret")).containsExactly(1);
    }

    @Test
    void should_ignore_a_planted_link_in_place_of_a_version_file() throws IOException {
        Path outside = outsideWithSecret();
        Path secretDir = outside.resolve("secret").resolve("@versions");
        service.save("doc", utf8("mine"), "text/plain");
        Path dir = versionsDir("doc");
        Files.createSymbolicLink(dir.resolve("v2.bin"), secretDir.resolve("v1.bin"));
        Files.copy(secretDir.resolve("v1.json"), dir.resolve("v2.json")); // metadata that would match the secret

        assertThat(service.versions("doc")).containsExactly(1);
        assertThatThrownBy(() -> service.load("doc", 2)).isInstanceOf(ArtifactNotFoundException.class);
        assertThat(service.load("doc")).hasValueSatisfying(a -> assertThat(a.content()).isEqualTo(utf8("mine")));

        // a save does not write through the link: it takes the next free number
        assertThat(service.save("doc", utf8("newer"), "text/plain").version()).isEqualTo(3);
        assertThat(FileSystemArtifactService.at(outside).load("secret", 1).content()).isEqualTo(utf8("TOP SECRET"));

        // delete removes the link, not its target
        service.delete("doc");
        assertThat(Files.readAllBytes(secretDir.resolve("v1.bin"))).isEqualTo(utf8("TOP SECRET"));
    }

    @Test
    void should_not_list_a_name_reached_only_through_a_planted_link() throws IOException {
        Path outside = outsideWithSecret();
        service.save("real", utf8("r"), null);
        Files.createSymbolicLink(root.resolve("linked"), outside);

        assertThat(service.names()).containsExactly("real");
    }

    // ---------------------------------------------------------------- root and permissions

    @Test
    void should_create_private_directories_and_files_when_on_posix() throws IOException {
        assumeTrue(root.getFileSystem().supportedFileAttributeViews().contains("posix"),
                "POSIX permissions not supported by this file system");
        service.save("reports/q1.md", utf8("x"), "text/markdown");

        Set<PosixFilePermission> dirMode = PosixFilePermissions.fromString("rwx------");
        Set<PosixFilePermission> fileMode = PosixFilePermissions.fromString("rw-------");
        assertThat(Files.getPosixFilePermissions(root)).isEqualTo(dirMode);
        assertThat(Files.getPosixFilePermissions(root.resolve("reports"))).isEqualTo(dirMode);
        assertThat(Files.getPosixFilePermissions(versionsDir("reports/q1.md"))).isEqualTo(dirMode);
        assertThat(Files.getPosixFilePermissions(versionsDir("reports/q1.md").resolve("v1.bin"))).isEqualTo(fileMode);
        assertThat(Files.getPosixFilePermissions(versionsDir("reports/q1.md").resolve("v1.json"))).isEqualTo(fileMode);
    }

    @Test
    void should_create_the_root_with_its_parents_when_missing() {
        Path deep = tmp.resolve("a/b/c");

        FileSystemArtifactService.at(deep).save("x", utf8("x"), null);

        assertThat(Files.isDirectory(deep.resolve("x"))).isTrue();
    }

    @Test
    void should_use_the_target_when_the_root_itself_is_a_link() throws IOException {
        Path real = Files.createDirectories(tmp.resolve("real-root"));
        Path link = Files.createSymbolicLink(tmp.resolve("link-root"), real);

        FileSystemArtifactService.at(link).save("x", utf8("via link"), null);

        assertThat(FileSystemArtifactService.at(real).load("x", 1).content()).isEqualTo(utf8("via link"));
    }

    @Test
    void should_refuse_a_root_when_it_is_a_regular_file() throws IOException {
        Path file = Files.writeString(tmp.resolve("file"), "x");

        assertThatThrownBy(() -> FileSystemArtifactService.at(file)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a directory");
    }

    @Test
    void should_report_a_damaged_store_when_a_file_stands_where_a_directory_belongs() throws IOException {
        Files.writeString(root.resolve("blocker"), "not a directory");

        assertThatThrownBy(() -> service.save("blocker/x", utf8("x"), null))
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("'blocker/x'");
    }
}
