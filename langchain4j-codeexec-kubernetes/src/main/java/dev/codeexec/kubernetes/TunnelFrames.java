package dev.codeexec.kubernetes;

import dev.codeexec.spi.StreamFrames;
import java.util.List;

/**
 * The frames of the egress tunnel between a pod's relay ({@link PodRelay}) and the engine ({@link PodTunnel}), carried
 * over one exec's stdin (engine to relay) and stdout (relay to engine) in the core's frame format
 * ({@link StreamFrames}): a 9-byte header, {@code [type: 1 byte]
 * [connection id: 4 bytes][length: 4 bytes]} (big-endian), then {@code length} bytes of payload.
 *
 * <ul>
 *   <li>{@link #READY} (relay to engine, id 0, no payload): the relay listens on {@code 127.0.0.1:3128}.</li>
 *   <li>{@link #OPEN} (relay to engine, no payload): a program connected; the id is new.</li>
 *   <li>{@link #DATA} (both ways): bytes of a connection, at most {@link #MAX_PAYLOAD}.</li>
 *   <li>{@link #END} (both ways, no payload): the sender's side of the connection reached its end (a half-close).</li>
 *   <li>{@link #CLOSE} (both ways, no payload): the sender dropped the connection; the receiver delivers what it
 *       holds for it and drops it too. The relay answers a frame for an id it does not know (any longer) with a
 *       {@code CLOSE}, so that the engine forgets a connection the relay never had; the engine ignores frames for
 *       ids it does not know.</li>
 *   <li>{@link #BYE} (engine to relay, id 0, no payload): the relay exits.</li>
 * </ul>
 *
 * <p>The relay runs as the pod's user, as the programs do, so anything in these frames may be a program's: the
 * {@link Decoder} refuses an unknown type, a payload where none belongs and a length over the bound with a
 * {@link StreamFrames.Malformed}, which ends the tunnel (never the engine). Stateless apart from each decoder; a decoder is used by
 * one thread.
 */
final class TunnelFrames {

    static final byte READY = 1;
    static final byte OPEN = 2;
    static final byte DATA = 3;
    static final byte END = 4;
    static final byte CLOSE = 5;
    static final byte BYE = 6;

    /** Bytes of a header. */
    static final int HEADER = StreamFrames.HEADER;
    /** Most bytes of one frame's payload: a frame fits one websocket message ({@link ExecSocket#MAX_FRAME}). */
    static final int MAX_PAYLOAD = 32 * 1024;

    private TunnelFrames() {
    }

    /** What the relay may send: the engine's decoder accepts nothing else. */
    private static final List<StreamFrames.Type> FROM_RELAY = List.of(
            new StreamFrames.Type(READY, "READY", 0), new StreamFrames.Type(OPEN, "OPEN", 0),
            new StreamFrames.Type(DATA, "DATA", MAX_PAYLOAD), new StreamFrames.Type(END, "END", 0),
            new StreamFrames.Type(CLOSE, "CLOSE", 0));

    /** A frame without payload. */
    static byte[] encode(byte type, int id) {
        return StreamFrames.encode(type, id);
    }

    /** A frame carrying {@code length} bytes of {@code b} (at most {@link #MAX_PAYLOAD}). */
    static byte[] encode(byte type, int id, byte[] b, int offset, int length) {
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new IllegalArgumentException("payload length (" + length + ") must be 0 to " + MAX_PAYLOAD);
        }
        return StreamFrames.encode(type, id, b, offset, length);
    }

    static String name(byte type) {
        return switch (type) {
            case READY -> "READY";
            case OPEN -> "OPEN";
            case DATA -> "DATA";
            case END -> "END";
            case CLOSE -> "CLOSE";
            case BYE -> "BYE";
            default -> "type " + (type & 0xff);
        };
    }

    /**
     * Decodes the relay's stream of frames (the shared codec, {@link StreamFrames.Decoder}). Accepts only what the
     * relay sends: {@link #READY}, {@link #OPEN}, {@link #DATA}, {@link #END}, {@link #CLOSE}.
     */
    static final class Decoder extends StreamFrames.Decoder {
        Decoder() {
            super(FROM_RELAY);
        }
    }
}
