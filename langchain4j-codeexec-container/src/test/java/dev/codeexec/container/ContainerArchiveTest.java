package dev.codeexec.container;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static dev.codeexec.testing.TarArchives.describing;
import static dev.codeexec.testing.TarArchives.dir;
import static dev.codeexec.testing.TarArchives.entries;
import static dev.codeexec.testing.TarArchives.file;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.RequestMethod;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.testing.TarArchives;
import dev.codeexec.testing.TarArchives.Item;
import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The archive endpoints against a fake Docker Engine API on loopback (WireMock), no Docker engine needed: archives
 * from the container go through the core's tar checks ({@code CheckedTarTest} tests each one), what the engine says
 * of a path (types, devices posing as files, negative sizes) is typed for what it is, each next to the well-formed
 * answer that passes; and the names and owner of what is written into a container.
 */
class ContainerArchiveTest {

    private static final String ID = "c0ffee";
    private static final String ARCHIVE = ".*/containers/" + ID + "/archive";
    private static final int UID = 1234;
    private static final int GID = 5678;

    private static WireMockServer server;
    private DockerConnection docker;
    private ContainerArchive archive;

    @BeforeAll
    static void start() {
        server = new WireMockServer(wireMockConfig().bindAddress("127.0.0.1").dynamicPort());
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void connect() {
        server.resetAll();
        server.stubFor(get(urlPathMatching(".*/containers/" + ID + "/json"))
                .willReturn(okJson("{\"Id\":\"" + ID + "\",\"State\":{\"Running\":true}}")));
        docker = DockerConnection.open("tcp://127.0.0.1:" + server.port(), null, false);
        archive = new ContainerArchive(docker, docker.controlHttp(), ID, "/workspace");
    }

    @AfterEach
    void close() throws Exception {
        docker.close();
    }

    // ------------------------------------------------------------------ reading a tree

    @Test
    void should_pass_entries_relative_to_the_requested_tree_when_the_archive_is_well_formed() {
        serveArchive(dir("data/"), file("data/a.txt", "alpha"), dir("data/sub/"), file("data/sub/b.txt", "beta"));

        assertThat(read("data")).containsExactly(". DIRECTORY", "a.txt FILE alpha", "sub DIRECTORY",
                "sub/b.txt FILE beta");
    }

    @Test
    void should_apply_the_tar_checks_when_the_container_sends_an_entry_with_an_absolute_name() {
        serveArchive(file("/etc/passwd", "root:x:0:0"));
        List<String> seen = new ArrayList<>();

        assertThatThrownBy(() -> archive.readArchive("data", describing(seen)))
                .isInstanceOf(PathEscapeException.class).hasMessageContaining("absolute name");
        assertThat(seen).isEmpty();
    }

    // ------------------------------------------------------------------ lstat through HEAD archive

    @Test
    void should_report_a_regular_file_with_its_size_mode_and_time_when_the_engine_stats_it() {
        serveStat("{\"name\":\"a.txt\",\"size\":42,\"mode\":420,\"mtime\":\"2026-01-02T03:04:05Z\",\"linkTarget\":\"\"}");

        assertThat(archive.lstat("a.txt")).contains(new ContainerArchive.Stat(EntryType.FILE, 42, 0644,
                Instant.parse("2026-01-02T03:04:05Z"), ""));
    }

    @Test
    void should_report_directories_and_links_when_the_engine_stats_them() {
        serveStat("{\"size\":4096,\"mode\":" + ((1L << 31) | 0755) + ",\"mtime\":\"2026-01-02T03:04:05Z\"}");
        assertThat(archive.lstat("d").map(ContainerArchive.Stat::type)).contains(EntryType.DIRECTORY);

        serveStat("{\"size\":11,\"mode\":" + ((1L << 27) | 0777) + ",\"linkTarget\":\"/etc/shadow\"}");
        assertThat(archive.lstat("l")).hasValueSatisfying(s -> {
            assertThat(s.type()).isEqualTo(EntryType.LINK);
            assertThat(s.linkTarget()).isEqualTo("/etc/shadow");
        });
    }

    @Test
    void should_report_devices_pipes_and_sockets_as_not_a_file_when_the_engine_stats_them() {
        long[] kinds = {1L << 26, 1L << 25, 1L << 24, (1L << 26) | (1L << 21), 1L << 19};
        for (long kind : kinds) {
            serveStat("{\"size\":0,\"mode\":" + (kind | 0666) + ",\"mtime\":\"2026-01-02T03:04:05Z\"}");

            assertThat(archive.lstat("dev-zero").map(ContainerArchive.Stat::type)).as("Go mode bit %x", kind)
                    .contains(EntryType.OTHER);
        }
    }

    @Test
    void should_report_no_negative_size_or_bad_time_when_the_engine_sends_them() {
        serveStat("{\"size\":-5,\"mode\":420,\"mtime\":\"yesterday\"}");

        assertThat(archive.lstat("a.txt")).hasValueSatisfying(s -> {
            assertThat(s.size()).isZero();
            assertThat(s.mtime()).isEqualTo(Instant.EPOCH);
        });
    }

    @Test
    void should_report_nothing_when_the_path_is_missing_in_a_running_container() {
        server.stubFor(any(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(404)));

        assertThat(archive.lstat("missing")).isEqualTo(Optional.empty());
    }

    @Test
    void should_report_a_gone_workspace_when_the_container_is_not_running() {
        server.stubFor(any(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(409)));

        assertThatThrownBy(() -> archive.lstat("a.txt")).isInstanceOf(WorkspaceGoneException.class);
    }

    @Test
    void should_fail_typed_when_the_engine_sends_no_stat_header() {
        server.stubFor(any(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(200)));

        assertThatThrownBy(() -> archive.lstat("a.txt")).isInstanceOf(CodeExecException.class)
                .hasMessageContaining("no file status");
    }

    // ------------------------------------------------------------------ writing into the container

    @Test
    void should_put_the_archive_as_built_into_the_directory_when_writing() throws IOException {
        server.stubFor(any(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(200)));
        ByteArrayOutputStream built = new ByteArrayOutputStream();
        try (CheckedTar.Writer tar = new CheckedTar.Writer(built, UID, GID)) {
            tar.directory("d", 0755, Instant.parse("2026-01-02T03:04:05Z"));
            tar.file("d/f.txt", "hello".getBytes(StandardCharsets.UTF_8), 0170644,
                    Instant.parse("2026-01-02T03:04:05Z"));
        }

        archive.putArchive("sub", new ByteArrayInputStream(built.toByteArray()), "write files");

        List<LoggedRequest> puts = server.findAll(anyRequestedFor(urlPathMatching(ARCHIVE)));
        assertThat(puts).hasSize(1);
        assertThat(puts.get(0).getMethod()).isEqualTo(RequestMethod.PUT);
        assertThat(puts.get(0).queryParameter("path").firstValue()).isEqualTo("/workspace/sub");
        List<String> entries = entries(puts.get(0).getBody());
        assertThat(entries).containsExactly("d/ 1234:5678 40755 0", "d/f.txt 1234:5678 100644 5");
    }

    // ------------------------------------------------------------------ helpers

    private List<String> read(String rel) {
        List<String> seen = new ArrayList<>();
        archive.readArchive(rel, describing(seen));
        return seen;
    }

    private static void serveArchive(Item... items) {
        server.stubFor(get(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/x-tar").withBody(TarArchives.archive(items))));
    }

    private static void serveStat(String json) {
        server.stubFor(any(urlPathMatching(ARCHIVE)).willReturn(aResponse().withStatus(200)
                .withHeader("X-Docker-Container-Path-Stat",
                        Base64.getEncoder().encodeToString(json.getBytes(StandardCharsets.UTF_8)))));
    }
}
