package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Connect's envelope framing, byte for byte (connectrpc.com/docs/protocol), and the stream reader over it. */
class ConnectFramesTest {

    private static EnvdStream stream(byte[] bytes) {
        return new EnvdStream(new ByteArrayInputStream(bytes), "sb1", "test", Duration.ofMinutes(5));
    }

    @Test
    void should_frame_a_request_as_flags_then_big_endian_length_then_json() {
        byte[] env = ConnectFrames.envelope("{\"path\":\"/tmp\"}".getBytes(StandardCharsets.UTF_8));

        // The example of protocols.md A.4: 15 bytes of JSON.
        assertThat(HexFormat.of().formatHex(env, 0, 7)).isEqualTo("000000000f7b22");
        assertThat(env).hasSize(20);
        assertThat(Wire.message("{\"path\":\"/tmp\"}")).isEqualTo(env);
    }

    @Test
    void should_read_a_large_length_as_unsigned_big_endian() throws IOException {
        String json = "{\"x\":\"" + "a".repeat(70_000) + "\"}";
        byte[] env = Wire.message(json);

        assertThat(HexFormat.of().formatHex(env, 1, 5)).isEqualTo(String.format("%08x", json.length()));
        ConnectFrames.Frame f = ConnectFrames.read(new ByteArrayInputStream(env));
        assertThat(new String(f.payload(), StandardCharsets.UTF_8)).isEqualTo(json);
        assertThat(f.endStream()).isFalse();
    }

    @Test
    void should_give_messages_then_end_at_an_empty_end_of_stream() throws IOException {
        EnvdStream s = stream(Wire.concat(Wire.start(412), Wire.keepalive(), Wire.stdout("hello\n"),
                Wire.exit(3), Wire.end("{}")));

        assertThat(s.next().at("/event/start/pid").asLong()).isEqualTo(412);
        assertThat(s.next().at("/event/keepalive").isObject()).isTrue();
        assertThat(s.next().at("/event/data/stdout").asText()).isEqualTo("aGVsbG8K");
        JsonNode end = s.next().at("/event/end");
        assertThat(end.path("exitCode").asInt()).isEqualTo(3);
        assertThat(s.next()).isNull();
        assertThat(s.ended()).isTrue();
        assertThat(s.next()).isNull();
    }

    @Test
    void should_accept_trailers_and_ignore_unknown_fields_in_the_end_of_stream() throws IOException {
        EnvdStream s = stream(Wire.concat(Wire.message("{\"event\":{\"future\":{\"x\":1}},\"extra\":true}"),
                Wire.end("{\"metadata\":{\"grpc-status-details-bin\":[\"x\"]}}")));

        assertThat(s.next().has("extra")).isTrue();
        assertThat(s.next()).isNull();
    }

    @Test
    void should_throw_the_error_of_an_end_of_stream_inside_http_200() {
        EnvdStream s = stream(Wire.concat(Wire.start(9), Wire.end(
                "{\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"context deadline exceeded\"}}")));

        assertThatThrownBy(() -> {
            s.next();
            s.next();
        }).isInstanceOf(E2bApiException.class)
                .satisfies(e -> assertThat(((E2bApiException) e).errorCode()).isEqualTo("deadline_exceeded"));
    }

    @Test
    void should_refuse_a_stream_that_ends_without_its_end_of_stream_envelope() throws IOException {
        EnvdStream s = stream(Wire.concat(Wire.start(9), Wire.stdout("x")));
        s.next();
        s.next();

        assertThatThrownBy(s::next).isInstanceOf(E2bProtocolException.class)
                .hasMessageContaining("without its end-of-stream envelope");
    }

    @Test
    void should_refuse_truncated_envelopes_unknown_flags_compression_and_oversized_lengths() {
        byte[] whole = Wire.start(1);
        byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 3);
        assertThatThrownBy(() -> ConnectFrames.read(new ByteArrayInputStream(cut)))
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("inside an envelope");
        assertThatThrownBy(() -> ConnectFrames.read(new ByteArrayInputStream(new byte[] {0, 0, 0})))
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("header");
        assertThatThrownBy(() -> ConnectFrames.read(new ByteArrayInputStream(Wire.envelope(0x80, "{}"))))
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("unknown envelope flags 0x80");
        assertThatThrownBy(() -> ConnectFrames.read(new ByteArrayInputStream(Wire.envelope(0x01, "{}"))))
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("compressed");
        byte[] huge = {0, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        assertThatThrownBy(() -> ConnectFrames.read(new ByteArrayInputStream(huge)))
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("4294967295 bytes");
        assertThatThrownBy(() -> stream(Wire.message("{not json")).next())
                .isInstanceOf(E2bProtocolException.class).hasMessageContaining("not JSON");
    }

    @Test
    void should_decode_standard_and_url_safe_base64_and_refuse_garbage() {
        assertThat(Sandbox.decode("/+8=", "t")).containsExactly(0xFF, 0xEF);
        assertThat(Sandbox.decode("_-8=", "t")).containsExactly(0xFF, 0xEF);
        assertThatThrownBy(() -> Sandbox.decode("***", "t")).isInstanceOf(E2bProtocolException.class);
    }
}
