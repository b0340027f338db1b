package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared frame codec with the types its user accepts: each type's own payload bound, unknown types refused. */
class StreamFramesTest {

    private static final List<StreamFrames.Type> TYPES = List.of(new StreamFrames.Type((byte) 1, "READY", 0),
            new StreamFrames.Type((byte) 3, "DATA", 64), new StreamFrames.Type((byte) 8, "EXIT", 4));

    private final List<String> decoded = new ArrayList<>();
    private final StreamFrames.Handler handler = (type, id, b, off, len) ->
            decoded.add(type + " " + id + " " + new String(b, off, len, StandardCharsets.UTF_8));

    private static byte[] header(int type, int id, int length) {
        return ByteBuffer.allocate(StreamFrames.HEADER).put((byte) type).putInt(id).putInt(length).array();
    }

    @Test
    void should_decode_the_accepted_types_within_their_bounds() throws Exception {
        StreamFrames.Decoder d = new StreamFrames.Decoder(TYPES);
        byte[] exit = "137".getBytes(StandardCharsets.US_ASCII);
        d.feed(StreamFrames.encode((byte) 1, 0), 0, StreamFrames.HEADER, handler);
        byte[] f = StreamFrames.encode((byte) 8, 0, exit, 0, exit.length);
        d.feed(f, 0, f.length, handler);
        assertThat(decoded).containsExactly("1 0 ", "8 0 137");
    }

    @Test
    void should_refuse_a_payload_over_its_types_bound_and_a_type_not_accepted() {
        byte[] long_exit = header(8, 0, 5);
        assertThatThrownBy(() -> new StreamFrames.Decoder(TYPES).feed(long_exit, 0, long_exit.length, handler))
                .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("EXIT frame of 5 bytes (at most 4)");
        byte[] open = header(2, 1, 0);
        assertThatThrownBy(() -> new StreamFrames.Decoder(TYPES).feed(open, 0, open.length, handler))
                .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("unknown frame type 2");
        byte[] ready = header(1, 0, 1);
        assertThatThrownBy(() -> new StreamFrames.Decoder(TYPES).feed(ready, 0, ready.length, handler))
                .isInstanceOf(StreamFrames.Malformed.class).hasMessageContaining("none belongs");
        assertThat(decoded).isEmpty();
    }
}
