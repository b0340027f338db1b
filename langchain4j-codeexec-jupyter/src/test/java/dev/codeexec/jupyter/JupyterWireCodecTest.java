package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JupyterWireCodecTest {

    private static final String KEY = "a0436f6c-1916-498b-8eb9-e81ab9368e84";
    private static final byte[] HEADER = b("{\"msg_id\":\"1\",\"msg_type\":\"status\"}");
    private static final byte[] PARENT = b("{}");
    private static final byte[] METADATA = b("{}");
    private static final byte[] CONTENT = b("{\"execution_state\":\"idle\"}");

    private final WireCodec codec = new WireCodec(KEY);

    @Test
    void should_sign_as_jupyter_client_does() {
        // jupyter_client.session.Session(key=KEY).sign([header, parent, metadata, content]), and hmac itself.
        assertThat(codec.sign(HEADER, PARENT, METADATA, CONTENT))
                .isEqualTo("4ea5bd1248eaf6f50495bc5b4bbf1df582d4b639b41f7e820450f42acdbf364f");
    }

    @Test
    void should_encode_delimiter_signature_and_four_frames() {
        List<byte[]> frames = codec.encode(HEADER, PARENT, METADATA, CONTENT);
        assertThat(frames).hasSize(6);
        assertThat(new String(frames.get(0), StandardCharsets.US_ASCII)).isEqualTo("<IDS|MSG>");
        assertThat(new String(frames.get(1), StandardCharsets.US_ASCII))
                .isEqualTo("4ea5bd1248eaf6f50495bc5b4bbf1df582d4b639b41f7e820450f42acdbf364f");
        assertThat(frames.subList(2, 6)).containsExactly(HEADER, PARENT, METADATA, CONTENT);
    }

    @Test
    void should_accept_a_signed_message_after_identities_or_a_topic_and_keep_its_buffers() {
        List<byte[]> frames = new ArrayList<>(List.of(b("kernel.abc.status"), b("another-identity")));
        frames.addAll(codec.encode(HEADER, PARENT, METADATA, CONTENT));
        frames.add(new byte[] {1, 2, 3});

        WireCodec.Decoded d = codec.decode(frames);

        assertThat(d.ok()).isTrue();
        assertThat(d.header()).isEqualTo(HEADER);
        assertThat(d.content()).isEqualTo(CONTENT);
        assertThat(d.buffers()).containsExactly(new byte[] {1, 2, 3});
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5})
    void should_drop_a_message_when_any_signed_frame_was_changed(int frame) {
        List<byte[]> frames = new ArrayList<>(codec.encode(HEADER, PARENT, METADATA, CONTENT));
        byte[] changed = frames.get(frame).clone();
        changed[changed.length - 1] ^= 1;
        frames.set(frame, changed);

        assertThat(codec.decode(frames).problem()).isEqualTo("bad signature");
    }

    @Test
    void should_drop_a_message_signed_with_another_key() {
        List<byte[]> forged = new WireCodec("not-the-key").encode(HEADER, PARENT, METADATA, CONTENT);

        assertThat(codec.decode(forged).ok()).isFalse();
        assertThat(codec.decode(forged).problem()).isEqualTo("bad signature");
    }

    @Test
    void should_drop_a_message_with_an_uppercase_or_truncated_signature() {
        List<byte[]> frames = new ArrayList<>(codec.encode(HEADER, PARENT, METADATA, CONTENT));
        String sig = new String(frames.get(1), StandardCharsets.US_ASCII);
        frames.set(1, b(sig.toUpperCase()));
        assertThat(codec.decode(frames).ok()).isFalse();
        frames.set(1, b(sig.substring(0, 32)));
        assertThat(codec.decode(frames).ok()).isFalse();
        frames.set(1, new byte[0]);
        assertThat(codec.decode(frames).ok()).isFalse();
    }

    @Test
    void should_drop_malformed_messages() {
        assertThat(codec.decode(List.of(HEADER, PARENT)).problem()).startsWith("malformed").contains("missing");
        List<byte[]> short_ = new ArrayList<>(codec.encode(HEADER, PARENT, METADATA, CONTENT).subList(0, 5));
        assertThat(codec.decode(short_).problem()).startsWith("malformed");
    }

    @Test
    void should_refuse_an_empty_key() {
        assertThatThrownBy(() -> new WireCodec("")).hasMessageContaining("key must not be empty");
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
