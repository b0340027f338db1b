package dev.codeexec.kubernetes;

import java.nio.ByteBuffer;

/**
 * The frames of the egress tunnel between a pod's relay ({@link PodRelay}) and the engine ({@link PodTunnel}), carried
 * over one exec's stdin (engine to relay) and stdout (relay to engine): a 9-byte header, {@code [type: 1 byte]
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
 * {@link Malformed}, which ends the tunnel (never the engine). Stateless apart from each decoder; a decoder is used by
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
    static final int HEADER = 9;
    /** Most bytes of one frame's payload: a frame fits one websocket message ({@link ExecSocket#MAX_FRAME}). */
    static final int MAX_PAYLOAD = 32 * 1024;

    private TunnelFrames() {
    }

    /** A frame that breaks the format: the tunnel ends. */
    static final class Malformed extends Exception {
        Malformed(String message) {
            super(message);
        }
    }

    /** Receives decoded frames; {@code payload} is valid only during the call. */
    interface Handler {
        void frame(byte type, int id, byte[] payload, int offset, int length) throws Malformed;
    }

    /** A frame without payload. */
    static byte[] encode(byte type, int id) {
        return encode(type, id, new byte[0], 0, 0);
    }

    /** A frame carrying {@code length} bytes of {@code b} (at most {@link #MAX_PAYLOAD}). */
    static byte[] encode(byte type, int id, byte[] b, int offset, int length) {
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new IllegalArgumentException("payload length (" + length + ") must be 0 to " + MAX_PAYLOAD);
        }
        ByteBuffer f = ByteBuffer.allocate(HEADER + length);
        f.put(type).putInt(id).putInt(length).put(b, offset, length);
        return f.array();
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
     * Decodes the relay's stream of frames in the chunks it arrives in (a frame may span chunks, a chunk may hold
     * several). Accepts only what the relay sends: {@link #READY}, {@link #OPEN}, {@link #DATA}, {@link #END},
     * {@link #CLOSE}. Holds at most one frame.
     */
    static final class Decoder {
        private final byte[] header = new byte[HEADER];
        private int headerFill;
        private byte type;
        private int id;
        private byte[] payload = new byte[0];
        private int payloadFill;
        private boolean inPayload;

        /** Feeds {@code length} bytes; calls {@code handler} for each whole frame, in order. */
        void feed(byte[] b, int offset, int length, Handler handler) throws Malformed {
            int i = offset;
            int end = offset + length;
            while (i < end) {
                if (!inPayload) {
                    int n = Math.min(HEADER - headerFill, end - i);
                    System.arraycopy(b, i, header, headerFill, n);
                    headerFill += n;
                    i += n;
                    if (headerFill < HEADER) {
                        return;
                    }
                    headerFill = 0;
                    startFrame();
                    if (payload.length == 0) {
                        handler.frame(type, id, payload, 0, 0);
                        continue;
                    }
                    inPayload = true;
                }
                int n = Math.min(payload.length - payloadFill, end - i);
                System.arraycopy(b, i, payload, payloadFill, n);
                payloadFill += n;
                i += n;
                if (payloadFill == payload.length) {
                    inPayload = false;
                    handler.frame(type, id, payload, 0, payload.length);
                }
            }
        }

        private void startFrame() throws Malformed {
            ByteBuffer h = ByteBuffer.wrap(header);
            type = h.get();
            id = h.getInt();
            int length = h.getInt();
            switch (type) {
                case DATA -> {
                    if (length < 0 || length > MAX_PAYLOAD) {
                        throw new Malformed("a DATA frame of " + Integer.toUnsignedString(length) + " bytes (at most "
                                + MAX_PAYLOAD + ")");
                    }
                }
                case READY, OPEN, END, CLOSE -> {
                    if (length != 0) {
                        throw new Malformed("a " + name(type) + " frame with " + Integer.toUnsignedString(length)
                                + " bytes of payload (none belongs)");
                    }
                }
                default -> throw new Malformed("an unknown frame type " + (type & 0xff));
            }
            payload = length == 0 ? new byte[0] : payload.length == length ? payload : new byte[length];
            payloadFill = 0;
        }

        /** Whether a frame was started and not finished (the stream ended inside it). */
        boolean midFrame() {
            return headerFill > 0 || inPayload;
        }
    }
}
