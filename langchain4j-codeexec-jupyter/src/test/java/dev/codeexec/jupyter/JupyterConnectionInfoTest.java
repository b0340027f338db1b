package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JupyterConnectionInfoTest {

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void should_allocate_five_distinct_ports_and_a_random_256_bit_key() {
        ConnectionInfo a = ConnectionInfo.allocate();
        ConnectionInfo b = ConnectionInfo.allocate();

        assertThat(Set.of(a.shellPort(), a.iopubPort(), a.stdinPort(), a.controlPort(), a.hbPort())).hasSize(5)
                .allSatisfy(p -> assertThat(p).isBetween(1, 65535));
        assertThat(a.key()).matches("[0-9a-f]{64}");
        assertThat(a.key()).isNotEqualTo(b.key());
        assertThat(a.shellAddress()).isEqualTo("tcp://127.0.0.1:" + a.shellPort());
    }

    @Test
    void should_write_the_connection_file_with_mode_0600_in_the_kernelspec_form(@TempDir Path dir) throws Exception {
        ConnectionInfo c = ConnectionInfo.allocate();
        Path file = dir.resolve("kernel.json");

        c.write(file, json);

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        JsonNode n = json.readTree(file.toFile());
        assertThat(n.path("transport").asText()).isEqualTo("tcp");
        assertThat(n.path("ip").asText()).isEqualTo("127.0.0.1");
        assertThat(n.path("signature_scheme").asText()).isEqualTo("hmac-sha256");
        assertThat(n.path("key").asText()).isEqualTo(c.key());
        assertThat(n.path("shell_port").asInt()).isEqualTo(c.shellPort());
        assertThat(n.path("iopub_port").asInt()).isEqualTo(c.iopubPort());
        assertThat(n.path("stdin_port").asInt()).isEqualTo(c.stdinPort());
        assertThat(n.path("control_port").asInt()).isEqualTo(c.controlPort());
        assertThat(n.path("hb_port").asInt()).isEqualTo(c.hbPort());
    }

    @Test
    void should_refuse_to_write_over_an_existing_file(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("kernel.json"), "someone else's");

        assertThatThrownBy(() -> ConnectionInfo.allocate().write(file, json)).hasMessageContaining("exists already");
        assertThat(Files.readString(file)).isEqualTo("someone else's");
    }

    @Test
    void should_not_print_the_key() {
        ConnectionInfo c = ConnectionInfo.allocate();

        assertThat(c.toString()).doesNotContain(c.key()).contains("key=<hidden>");
    }
}
