package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.spi.StreamFrames;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tunnel's frame codec: whole frames in any chunking, and every way a relay's stream can break the format. */
class TunnelFramesTest {

    private final List<String> decoded = new ArrayList<>();
    private final StreamFrames.Handler handler = (type, id, b, off, len) ->
            decoded.add(TunnelFrames.name(type) + " " + id + " " + new String(b, off, len, StandardCharsets.UTF_8));

    private static byte[] header(int type, int id, int length) {
        return ByteBuffer.allocate(TunnelFrames.HEADER).put((byte) type).putInt(id).putInt(length).array();
    }

    @Test
    void should_decode_frames_split_across_chunks_and_several_in_one_chunk() throws Exception {
        ByteArrayOutputStream s = new ByteArrayOutputStream();
        s.writeBytes(TunnelFrames.encode(TunnelFrames.READY, 0));
        s.writeBytes(TunnelFrames.encode(TunnelFrames.OPEN, 7));
        byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
        s.writeBytes(TunnelFrames.encode(TunnelFrames.DATA, 7, hello, 0, hello.length));
        s.writeBytes(TunnelFrames.encode(TunnelFrames.END, 7));
        s.writeBytes(TunnelFrames.encode(TunnelFrames.CLOSE, 7));
        byte[] all = s.toByteArray();
        for (int chunk : new int[] {1, 2, 5, 9, 10, all.length}) {
            decoded.clear();
            TunnelFrames.Decoder d = new TunnelFrames.Decoder();
            for (int i = 0; i < all.length; i += chunk) {
                d.feed(all, i, Math.min(chunk, all.length - i), handler);
            }
            assertThat(decoded).as("chunks of %d", chunk)
                    .containsExactly("READY 0 ", "OPEN 7 ", "DATA 7 hello", "END 7 ", "CLOSE 7 ");
            assertThat(d.midFrame()).isFalse();
        }
    }

    @Test
    void should_decode_a_data_frame_of_the_largest_size_and_refuse_one_byte_more() throws Exception {
        byte[] big = new byte[TunnelFrames.MAX_PAYLOAD];
        byte[] frame = TunnelFrames.encode(TunnelFrames.DATA, 1, big, 0, big.length);
        assertThat(frame.length).isLessThanOrEqualTo(ExecSocket.MAX_FRAME);
        new TunnelFrames.Decoder().feed(frame, 0, frame.length, handler);
        assertThat(decoded).hasSize(1);
        byte[] over = header(TunnelFrames.DATA, 1, TunnelFrames.MAX_PAYLOAD + 1);
        assertThatThrownBy(() -> new TunnelFrames.Decoder().feed(over, 0, over.length, handler))
                .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("at most " + TunnelFrames.MAX_PAYLOAD);
        assertThatThrownBy(() -> TunnelFrames.encode(TunnelFrames.DATA, 1, new byte[big.length + 1], 0,
                big.length + 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void should_refuse_a_negative_length_when_its_top_bit_is_set() {
        byte[] h = header(TunnelFrames.DATA, 1, 0xffffffff);
        assertThatThrownBy(() -> new TunnelFrames.Decoder().feed(h, 0, h.length, handler))
                .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("4294967295 bytes");
        assertThat(decoded).isEmpty();
    }

    @Test
    void should_refuse_unknown_types_and_frames_the_relay_never_sends() {
        for (int type : new int[] {0, TunnelFrames.BYE, 7, 255}) {
            byte[] h = header(type, 0, 0);
            assertThatThrownBy(() -> new TunnelFrames.Decoder().feed(h, 0, h.length, handler)).as("type %d", type)
                    .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("unknown frame type");
        }
        assertThat(decoded).isEmpty();
    }

    @Test
    void should_refuse_a_payload_on_a_frame_that_has_none() {
        for (byte type : new byte[] {TunnelFrames.READY, TunnelFrames.OPEN, TunnelFrames.END, TunnelFrames.CLOSE}) {
            byte[] h = header(type, 3, 1);
            assertThatThrownBy(() -> new TunnelFrames.Decoder().feed(h, 0, h.length, handler))
                    .as(TunnelFrames.name(type)).isInstanceOf(StreamFrames.Malformed.class)
                    .hasMessageContaining("none belongs");
        }
    }

    @Test
    void should_report_a_stream_that_ends_inside_a_frame() throws Exception {
        byte[] f = TunnelFrames.encode(TunnelFrames.DATA, 2, new byte[10], 0, 10);
        TunnelFrames.Decoder d = new TunnelFrames.Decoder();
        d.feed(f, 0, 12, handler);
        assertThat(d.midFrame()).isTrue();
        assertThat(decoded).isEmpty();
        d.feed(f, 12, f.length - 12, handler);
        assertThat(d.midFrame()).isFalse();
        assertThat(decoded).hasSize(1);
    }
}
